import HTTPTypes
import Hummingbird
import PushTraceStore

/// The console's session cookie (docs/console.md): `HttpOnly` (no script can read it), `SameSite=Strict` (no other
/// site can send it), `Secure` whenever the request came over TLS, and at most 12 hours. Its value is a
/// ``SessionText``, never the token.
enum ConsoleSessionCookie {
    static let name = "pushtrace_session"
    /// How long a session lasts, in seconds.
    static let lifetime: Int64 = 12 * 3600

    /// The `Set-Cookie` value that starts a session.
    static func start(_ session: SessionText, maxAge: Int64, secure: Bool) -> String {
        "\(name)=\(session.text); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// The `Set-Cookie` value that ends it.
    static func end(secure: Bool) -> String {
        "\(name)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }
}
