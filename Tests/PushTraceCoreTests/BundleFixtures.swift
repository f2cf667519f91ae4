import PushTraceCore
import PushTraceGzip
import Testing

/// Bundle lines for tests, written as an agent would.
enum Fixture {
    static let manifest =
        #"{"type":"manifest","schema":1,"bundle_id":"6f1c2a9e-4b1d-4f0e-9a55-0c3e2d1b7a10","app_id":"net.rorklab.dailypick","device_id":"d-7c1e0b","uploaded_at":1763622003120}"#
    static let received =
        #"{"type":"event","ts":1763622001234,"process":"service","event":"service.received","notification_id":"6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10","category":"DAILY_PICK"}"#
    static let delivered =
        #"{"type":"event","ts":1763622001634,"process":"service","event":"service.delivered","notification_id":"6F1C2A9E-4B1D-4F0E-9A55-0C3E2D1B7A10","elapsed_ms":400}"#

    static func text(_ lines: [String], newline: String = "\n") -> [UInt8] {
        Array(lines.map { $0 + newline }.joined().utf8)
    }

    static func gzip(_ lines: [String]) -> [UInt8] { Deflater.gzip(text(lines)) }
}

/// Everything a decoder handed on, or the error that stopped it.
struct Decoded {
    var manifest: Any? = nil
    var records: [DecodedRecord] = []
    var rejected: [RejectedLine] = []
    var error: BundleError?

    /// Decodes `bytes` fed in chunks of `chunk` bytes.
    init(_ bytes: [UInt8], encoding: ContentEncoding = .sniff, limits: BundleLimits = .default, chunk: Int = 4096) {
        let decoder = BundleDecoder(encoding: encoding, limits: limits)
        let items = ItemBox()
        let sink: (BundleItem) -> Void = { items.all.append($0) }
        defer {
            for item in items.all {
                switch item {
                case .manifest(let m): manifest = m
                case .record(let r): records.append(r)
                case .rejected(let r): rejected.append(r)
                }
            }
        }
        do {
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunk, bytes.count)
                try bytes[offset..<end].withUnsafeBytes { try decoder.consume($0, sink) }
                offset = end
            }
            try decoder.finish(sink)
        } catch let error as BundleError {
            self.error = error
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

final class ItemBox { var all: [BundleItem] = [] }
