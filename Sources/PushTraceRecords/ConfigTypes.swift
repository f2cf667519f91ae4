/// A category the main app registers with `UNUserNotificationCenter.setNotificationCategories` (docs/protocol.md#config-records).
public struct CategoryConfig: Codable, Sendable, Hashable {
    public var id: String
    public var actions: [String]?

    public init(id: String, actions: [String]? = nil) {
        self.id = id
        self.actions = actions
    }
}

/// The content extension's `NSExtensionAttributes` from its Info.plist (docs/protocol.md#config-records).
public struct ContentExtensionPlist: Codable, Sendable, Hashable {
    /// `UNNotificationExtensionCategory`: a string or an array of strings in the real plist; always a list here.
    public var categories: [String]?
    public var initialContentSizeRatio: Double?
    public var defaultContentHidden: Bool?
    public var userInteractionEnabled: Bool?

    public init(
        categories: [String]?, initialContentSizeRatio: Double? = nil,
        defaultContentHidden: Bool? = nil, userInteractionEnabled: Bool? = nil
    ) {
        self.categories = categories
        self.initialContentSizeRatio = initialContentSizeRatio
        self.defaultContentHidden = defaultContentHidden
        self.userInteractionEnabled = userInteractionEnabled
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case categories = "UNNotificationExtensionCategory"
        case initialContentSizeRatio = "UNNotificationExtensionInitialContentSizeRatio"
        case defaultContentHidden = "UNNotificationExtensionDefaultContentHidden"
        case userInteractionEnabled = "UNNotificationExtensionUserInteractionEnabled"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if let single = try? c.decodeIfPresent(String.self, forKey: .categories) {
            categories = [single]
        } else {
            categories = try c.decodeIfPresent([String].self, forKey: .categories)
        }
        initialContentSizeRatio = try c.decodeIfPresent(Double.self, forKey: .initialContentSizeRatio)
        defaultContentHidden = try c.decodeIfPresent(Bool.self, forKey: .defaultContentHidden)
        userInteractionEnabled = try c.decodeIfPresent(Bool.self, forKey: .userInteractionEnabled)
    }
}
