import Foundation

/// The proxies whose `X-Forwarded-For` the server believes (`serve --trusted-proxy`): addresses and CIDR ranges.
///
/// A client can send any `X-Forwarded-For` it likes, so the header says who the client is only when the peer that
/// sent it is a proxy the operator named; then the client is the last address in it that is not such a proxy.
public struct TrustedProxies: Sendable, Equatable {
    /// One address range: its first bytes (4 for IPv4, 16 for IPv6) and how many leading bits must match.
    struct Range: Sendable, Equatable {
        var bytes: [UInt8]
        var prefix: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            for bit in 0..<prefix where (address[bit / 8] ^ bytes[bit / 8]) & (0x80 >> UInt8(bit % 8)) != 0 {
                return false
            }
            return true
        }
    }

    var ranges: [Range]

    /// No proxy is trusted: the peer is the client.
    public static let none = TrustedProxies(ranges: [])

    init(ranges: [Range]) {
        self.ranges = ranges
    }

    /// Parses addresses and ranges: `10.0.0.5`, `10.0.0.0/8`, `::1`, `fd00::/8`.
    public init(parsing list: [String]) throws(TrustedProxyError) {
        ranges = try list.map { text throws(TrustedProxyError) in
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.address(String(parts[0])) else {
                throw TrustedProxyError("\(text.debugDescription) is not an IP address or a CIDR range (e.g. 10.0.0.5, 10.0.0.0/8, ::1)")
            }
            var prefix = bytes.count * 8
            if parts.count == 2 {
                guard let bits = Int(parts[1]), (0...prefix).contains(bits) else {
                    throw TrustedProxyError("\(text.debugDescription): the prefix length must be 0 to \(prefix)")
                }
                prefix = bits
            }
            return Range(bytes: bytes, prefix: prefix)
        }
    }

    /// Whether `address` (an IP address's text) is one of the trusted proxies.
    public func contains(_ address: String) -> Bool {
        guard let bytes = Self.address(address) else { return false }
        return ranges.contains { $0.contains(bytes) }
    }

    /// The client's address, for logs: the peer's, or, when the peer is a trusted proxy, the last address of
    /// `X-Forwarded-For` (every value of the header, in order) that is not one. The walk stops at an entry that is
    /// not an address, and believes nothing before it. Always an address in its canonical text, or nil.
    public func client(peer: String?, forwardedFor: [String]) -> String? {
        guard let peer, let peerBytes = Self.address(peer) else { return nil }
        var client = peerBytes
        if ranges.contains(where: { $0.contains(peerBytes) }) {
            let entries = forwardedFor.flatMap { $0.split(separator: ",") }
            for entry in entries.reversed() {
                guard let bytes = Self.address(String(entry)) else { break }
                client = bytes
                if !ranges.contains(where: { $0.contains(bytes) }) { break }
            }
        }
        return Self.text(client)
    }

    /// An address's bytes (an IPv4 address mapped into IPv6 as its 4), from its text: surrounding blanks and the
    /// brackets of `[::1]` allowed, nothing else.
    static func address(_ text: String) -> [UInt8]? {
        var text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    /// The canonical text of an address's bytes.
    static func text(_ bytes: [UInt8]) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let done = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        guard done, let end = buffer.firstIndex(of: 0) else { return nil }
        return String(decoding: buffer[..<end].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A `--trusted-proxy` that is not an address or a range.
public struct TrustedProxyError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
