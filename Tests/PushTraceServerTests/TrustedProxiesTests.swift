import Foundation
import HTTPTypes
import Logging
import Testing

@testable import PushTraceServer

@Suite("The client's address behind a trusted proxy")
struct TrustedProxiesTests {
    @Test("X-Forwarded-For is believed only from a trusted peer, and only up to the first hop that is not trusted")
    func clientAddress() throws {
        let proxies = try TrustedProxies(parsing: ["127.0.0.1", "10.0.0.0/8", "fd00::/8"])
        // No header, or an untrusted peer: the peer, whatever the header says.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: []) == "127.0.0.1")
        #expect(proxies.client(peer: "198.51.100.9", forwardedFor: ["203.0.113.7"]) == "198.51.100.9")
        // A trusted peer: the last address that is not a proxy, skipping the proxies' own hops.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.7"]) == "203.0.113.7")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["1.2.3.4, 203.0.113.7, 10.1.2.3"]) == "203.0.113.7")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["1.2.3.4", "203.0.113.7 , 10.1.2.3"]) == "203.0.113.7")
        // Every hop trusted: the first of them.
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["10.9.9.9, 10.1.2.3"]) == "10.9.9.9")
        // Not an address: nothing before it is believed (the hop after it stands).
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.7, evil\n2026 forged"]) == "127.0.0.1")
        #expect(proxies.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.7, unknown, 10.1.2.3"]) == "10.1.2.3")
        // IPv6, bracketed or not, in canonical form; an IPv4 peer mapped into IPv6 is the IPv4 address.
        #expect(proxies.client(peer: "fd12::1", forwardedFor: ["[2001:DB8::0:1]"]) == "2001:db8::1")
        #expect(proxies.client(peer: "::ffff:127.0.0.1", forwardedFor: ["203.0.113.7"]) == "203.0.113.7")
        #expect(TrustedProxies.none.client(peer: "127.0.0.1", forwardedFor: ["203.0.113.7"]) == "127.0.0.1")
        #expect(TrustedProxies.none.client(peer: nil, forwardedFor: ["203.0.113.7"]) == nil)
    }

    @Test("a proxy that is not an address or a range is refused, saying which and why")
    func badProxies() {
        for (text, says) in [
            ("10.0.0.0/33", "prefix length must be 0 to 32"), ("proxy.local", "not an IP address"),
            ("::1/129", "0 to 128"), ("10.0.0.1/", "prefix length"), ("", "not an IP address"),
        ] {
            #expect { try TrustedProxies(parsing: [text]) } throws: { "\($0)".contains(says) }
        }
        let everything = try? TrustedProxies(parsing: ["0.0.0.0/0"])
        #expect(everything?.contains("8.8.8.8") == true)
        let tens = try? TrustedProxies(parsing: ["10.0.0.0/8"])
        #expect(tens?.contains("11.0.0.1") == false)
    }

    @Test(
        "a live server logs the client named by a trusted proxy, and the peer when the peer is not trusted",
        arguments: [true, false])
    func logsTheClient(trusted: Bool) async throws {
        let capture = LogCapture()
        var server = try await TestServer { settings in
            if trusted { settings.trustedProxies = try! TrustedProxies(parsing: ["127.0.0.1"]) }
        }
        var logger = Logger(label: "pushtrace-test") { _ in capture.handler() }
        logger.logLevel = .info
        server.logger = logger
        try await server.run { [server] client in
            var headers = HTTPFields()
            headers[HTTPField.Name("X-Forwarded-For")!] = "203.0.113.7"
            let response = try await client.upload(Bodies.bundle(), token: server.ingestToken, extra: headers)
            #expect(response.status == .ok)
        }
        let stored = try #require(capture.lines.first { $0.message == "bundle stored" })
        #expect(stored.metadata["client"] == (trusted ? "203.0.113.7" : "127.0.0.1"))
    }
}
