import Foundation

extension Record {
    /// Reads a record from a `JSONSerialization` object without type checks.
    ///
    /// For lines already validated by the strict decoder when they were stored: reading them back this way is
    /// more than twice as fast as decoding them again.
    public init(jsonObject o: [String: Any]) {
        type = o[CodingKeys.type.rawValue] as? String
        ts = (o[CodingKeys.ts.rawValue] as? NSNumber)?.int64Value
        process = o[CodingKeys.process.rawValue] as? String
        event = o[CodingKeys.event.rawValue] as? String
        notificationID = o[CodingKeys.notificationID.rawValue] as? String
        level = o[CodingKeys.level.rawValue] as? String
        message = o[CodingKeys.message.rawValue] as? String
        appGroup = o[CodingKeys.appGroup.rawValue] as? String
        categories = (o[CodingKeys.categories.rawValue] as? [[String: Any]])?.compactMap(CategoryConfig.init(jsonObject:))
        interactiveControls = o[CodingKeys.interactiveControls.rawValue] as? Bool
        infoPlist = (o[CodingKeys.infoPlist.rawValue] as? [String: Any]).map(ContentExtensionPlist.init(jsonObject:))
        category = o[CodingKeys.category.rawValue] as? String
        mutableContent = o[CodingKeys.mutableContent.rawValue] as? Bool
        hasAlert = o[CodingKeys.hasAlert.rawValue] as? Bool
        payloadBytes = (o[CodingKeys.payloadBytes.rawValue] as? NSNumber)?.int64Value
        deviceID = o[CodingKeys.deviceID.rawValue] as? String
        attachmentURL = o[CodingKeys.attachmentURL.rawValue] as? String
        status = (o[CodingKeys.status.rawValue] as? NSNumber)?.int64Value
        reason = o[CodingKeys.reason.rawValue] as? String
        urlHost = o[CodingKeys.urlHost.rawValue] as? String
        durationMs = (o[CodingKeys.durationMs.rawValue] as? NSNumber)?.int64Value
        httpStatus = (o[CodingKeys.httpStatus.rawValue] as? NSNumber)?.int64Value
        bytes = (o[CodingKeys.bytes.rawValue] as? NSNumber)?.int64Value
        mime = o[CodingKeys.mime.rawValue] as? String
        error = o[CodingKeys.error.rawValue] as? String
        ok = o[CodingKeys.ok.rawValue] as? Bool
        uti = o[CodingKeys.uti.rawValue] as? String
        elapsedMs = (o[CodingKeys.elapsedMs.rawValue] as? NSNumber)?.int64Value
        lastFootprintBytes = (o[CodingKeys.lastFootprintBytes.rawValue] as? NSNumber)?.int64Value
        action = o[CodingKeys.action.rawValue] as? String
        response = o[CodingKeys.response.rawValue] as? String
        waitedMs = (o[CodingKeys.waitedMs.rawValue] as? NSNumber)?.int64Value
        suite = o[CodingKeys.suite.rawValue] as? String
        self.key = o[CodingKeys.key.rawValue] as? String
        found = o[CodingKeys.found.rawValue] as? Bool
        notificationSettings = (o[CodingKeys.notificationSettings.rawValue] as? [String: Any])
            .map(NotificationSettings.init(jsonObject:))
        interruptionLevel = o[CodingKeys.interruptionLevel.rawValue] as? String
        collapseID = o[CodingKeys.collapseID.rawValue] as? String
        expiration = (o[CodingKeys.expiration.rawValue] as? NSNumber)?.int64Value
    }
}

extension CategoryConfig {
    init?(jsonObject o: [String: Any]) {
        guard let id = o["id"] as? String else { return nil }
        self.init(id: id, actions: o["actions"] as? [String])
    }
}

extension ContentExtensionPlist {
    init(jsonObject o: [String: Any]) {
        let categories = o[CodingKeys.categories.rawValue]
        self.init(
            categories: (categories as? String).map { [$0] } ?? categories as? [String],
            initialContentSizeRatio: (o[CodingKeys.initialContentSizeRatio.rawValue] as? NSNumber)?.doubleValue,
            defaultContentHidden: o[CodingKeys.defaultContentHidden.rawValue] as? Bool,
            userInteractionEnabled: o[CodingKeys.userInteractionEnabled.rawValue] as? Bool)
    }
}

extension NotificationSettings {
    init(jsonObject o: [String: Any]) {
        self.init()
        authorization = o[CodingKeys.authorization.rawValue] as? String
        alert = o[CodingKeys.alert.rawValue] as? String
        lockScreen = o[CodingKeys.lockScreen.rawValue] as? String
        notificationCenter = o[CodingKeys.notificationCenter.rawValue] as? String
        alertStyle = o[CodingKeys.alertStyle.rawValue] as? String
        scheduledDelivery = o[CodingKeys.scheduledDelivery.rawValue] as? String
        timeSensitive = o[CodingKeys.timeSensitive.rawValue] as? String
    }
}
