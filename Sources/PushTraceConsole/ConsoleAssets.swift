/// The console's static files, compiled into the binary (served under `/ui/static/`).
public enum ConsoleAssets {
    /// A static file: its bytes and content type.
    public struct Asset: Sendable {
        public var bytes: [UInt8]
        public var contentType: String
    }

    /// The file named `name` (`console.css`, `follow.js`, `favicon.svg`), or nil.
    public static func named(_ name: String) -> Asset? {
        switch name {
        case "console.css": return Asset(bytes: PackageResources.console_css, contentType: "text/css; charset=utf-8")
        case "follow.js": return Asset(bytes: PackageResources.follow_js, contentType: "text/javascript; charset=utf-8")
        case "favicon.svg": return Asset(bytes: PackageResources.favicon_svg, contentType: "image/svg+xml")
        default: return nil
        }
    }
}
