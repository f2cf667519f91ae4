import HTTPTypes
import Hummingbird
import PushTraceStore

/// The console's session cookie (docs/console.md): `HttpOnly` (no script can read it), `SameSite=Strict` (no other
/// site can send it), `Secure` whenever the request came over TLS, and at most 12 hours. Its value is a
/// ``SessionText``, never the token.
///
/// Over TLS it is named with the `__Host-` prefix, which browsers accept only from this host, `Secure`, for `/`:
/// a sibling subdomain cannot plant one.
enum ConsoleSessionCookie {
    static let name = "pushtrace_session"
    static let secureName = "__Host-pushtrace_session"
    /// How long a session lasts, in seconds.
    static let lifetime: Int64 = 12 * 3600

    /// The `Set-Cookie` value that starts a session.
    static func start(_ session: SessionText, maxAge: Int64, secure: Bool) -> String {
        "\(secure ? secureName : name)=\(session.text); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that ends it.
    static func end(secure: Bool) -> String {
        "\(secure ? secureName : name)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// The session cookie a request carries, under either name.
    static func value(in request: Request) -> String? {
        (request.cookies[secureName] ?? request.cookies[name])?.value
    }

    /// Whether a form posted to the console came from the console itself: the browser's `Sec-Fetch-Site` says
    /// `same-origin` (or nothing: a client that is no browser), and an `Origin` names this host. A sign-in forged
    /// by another site, or a sign-out forced by one, is refused.
    static func postedFromHere(_ request: Request) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!]?.lowercased(), site != "same-origin", site != "none" {
            return false
        }
        guard let origin = request.headers[HTTPField.Name("Origin")!], origin != "null" else { return true }
        // Host names only: a proxy in front (deploy/nginx.conf) passes the host without the port the browser used.
        guard let host = request.head.authority,
            let authority = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first
        else { return false }
        return hostname(String(authority)) == hostname(host)
    }

    /// `example.com` of `example.com:8443`, `::1` of `[::1]:8080`, lowercased.
    static func hostname(_ authority: String) -> String {
        let lower = authority.lowercased()
        if lower.hasPrefix("["), let end = lower.firstIndex(of: "]") {
            return String(lower[lower.index(after: lower.startIndex)..<end])
        }
        return String(lower.split(separator: ":", maxSplits: 1).first ?? "")
    }
}
