/// The one-pass reader's nested fields of config records (docs/protocol.md#config-records): `categories`, `info_plist` and `notification_settings`. A third of
/// an app's bundle lines are config records, and `JSONDecoder` read the nested ones at ten times the cost of a
/// flat line. As for flat fields, these readers take only what they read exactly as the `Decodable` types do
/// (`CategoryConfig`, `ContentExtensionPlist`) and report failure for anything else, which `JSONDecoder` then reads.
extension FlatJSONScanner {
    /// `categories`: an array of `{"id": String, "actions": [String]?}`.
    mutating func categories(into field: inout [CategoryConfig]?) -> Bool {
        guard let list = array(of: { (s: inout FlatJSONScanner) in s.category() }) else { return false }
        field = list
        return true
    }

    /// `info_plist`: the content extension's attributes.
    mutating func plist(into field: inout ContentExtensionPlist?) -> Bool {
        var plist = ContentExtensionPlist(categories: nil)
        let read = object(keys: Self.plistKeys) { key, s in
            switch ContentExtensionPlist.CodingKeys.allCases[key] {
            // A string stands for a list of one, as in a real Info.plist.
            case .categories:
                var single: String?
                if s.peek(.quote) {
                    guard s.text(into: &single) else { return false }
                    plist.categories = single.map { [$0] }
                    return true
                }
                return s.strings(into: &plist.categories)
            case .initialContentSizeRatio: return s.decimal(into: &plist.initialContentSizeRatio)
            case .defaultContentHidden: return s.boolean(into: &plist.defaultContentHidden)
            case .userInteractionEnabled: return s.boolean(into: &plist.userInteractionEnabled)
            }
        }
        guard read else { return false }
        field = plist
        return true
    }

    /// `notification_settings`: an object of strings.
    mutating func settings(into field: inout NotificationSettings?) -> Bool {
        var settings = NotificationSettings()
        let read = object(keys: Self.settingsKeys) { key, s in
            switch NotificationSettings.CodingKeys.allCases[key] {
            case .authorization: return s.text(into: &settings.authorization)
            case .alert: return s.text(into: &settings.alert)
            case .lockScreen: return s.text(into: &settings.lockScreen)
            case .notificationCenter: return s.text(into: &settings.notificationCenter)
            case .alertStyle: return s.text(into: &settings.alertStyle)
            case .scheduledDelivery: return s.text(into: &settings.scheduledDelivery)
            case .timeSensitive: return s.text(into: &settings.timeSensitive)
            }
        }
        guard read else { return false }
        field = settings
        return true
    }

    private static let settingsKeys = NotificationSettings.CodingKeys.allCases.map { Array($0.rawValue.utf8) }
    private static let plistKeys = ContentExtensionPlist.CodingKeys.allCases.map { Array($0.rawValue.utf8) }
    private static let categoryKeys = [Array("id".utf8), Array("actions".utf8)]

    private mutating func category() -> CategoryConfig? {
        var id: String?
        var actions: [String]?
        let read = object(keys: Self.categoryKeys) { key, s in
            key == 0 ? s.text(into: &id) : s.strings(into: &actions)
        }
        // `id` is required: a category without one (or with `null`) is the strict decoder's to describe.
        guard read, let id else { return nil }
        return CategoryConfig(id: id, actions: actions)
    }

    /// An array of strings (not `null`, which the caller's object reader takes).
    private mutating func strings(into field: inout [String]?) -> Bool {
        guard
            let list = array(of: { (s: inout FlatJSONScanner) -> String? in
                var value: String?
                return s.text(into: &value) ? value : nil
            })
        else { return false }
        field = list
        return true
    }

    /// A number with at most a fraction (no exponent) and few enough digits that every reader rounds it alike.
    private mutating func decimal(into field: inout Double?) -> Bool {
        let start = position
        guard number(), position - start <= 15 else { return false }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: position - start), as: UTF8.self)
        guard !text.contains(where: { $0 == "e" || $0 == "E" }), let value = Double(text) else { return false }
        field = value
        return true
    }

    /// An array whose every element `element` reads; nil for anything else.
    private mutating func array<Element>(of element: (inout FlatJSONScanner) -> Element?) -> [Element]? {
        guard take(.openBracket) else { return nil }
        var list: [Element] = []
        skipSpace()
        if take(.closeBracket) { return list }
        while true {
            guard let value = element(&self) else { return nil }
            list.append(value)
            skipSpace()
            if take(.closeBracket) { return list }
            guard take(.comma) else { return nil }
            skipSpace()
        }
    }
}
