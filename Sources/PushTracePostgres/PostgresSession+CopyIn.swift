import NIOCore
import PostgresNIO
import PushTraceStore

extension PostgresSession {
    /// Appends `rows` to `table` by `COPY … FROM STDIN` (text format): PostgreSQL parses one stream of lines rather
    /// than a statement and its bound values per row, and no statement text is built. Only for tables and columns
    /// named by pushtrace's own code (they are not quoted against injection).
    func copyIn(into table: String, columns: [String], _ rows: [[SQLValue]]) throws {
        guard !rows.isEmpty else { return }
        // A chunk of lines is written at a time, so that the text is never made whole for a page of large blocks.
        var chunks: [ByteBuffer] = []
        var chunk = ByteBuffer()
        chunk.reserveCapacity(Self.copyChunkBytes)
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { chunk.writeInteger(UInt8(ascii: "\t")) }
                Self.appendCopyText(value, to: &chunk)
            }
            chunk.writeInteger(UInt8(ascii: "\n"))
            if chunk.readableBytes >= Self.copyChunkBytes {
                chunks.append(chunk)
                chunk = ByteBuffer()
                chunk.reserveCapacity(Self.copyChunkBytes)
            }
        }
        if chunk.readableBytes > 0 { chunks.append(chunk) }
        let (connection, logger, lines) = (connection, logger, chunks)
        let promise = connection.eventLoop.makePromise(of: Void.self)
        let work: @Sendable () async -> Void = {
            do {
                guard !connection.isClosed else { throw ChannelError.ioOnClosedChannel }
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    for chunk in lines { try await writer.write(chunk) }
                }
                promise.succeed()
            } catch {
                promise.fail(error)
            }
        }
        // On the connection's event loop where the platform allows, as prepared statements are
        // (``query(_:)-(Statement)``).
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            Task(executorPreference: EventLoopExecutor(connection.eventLoop), operation: work)
        } else {
            Task(operation: work)
        }
        try settle()
        try Self.wait(promise.futureResult, connection: connection, deadline: deadline)
    }

    /// How many bytes of lines one write of a copy carries.
    static let copyChunkBytes = 1 << 20

    /// `value` as `COPY`'s text format writes it: `\N` for NULL; in text, a backslash, tab, newline and carriage
    /// return escaped; bytes as `bytea`'s hex form (`\x…`, its backslash escaped).
    static func appendCopyText(_ value: SQLValue, to buffer: inout ByteBuffer) {
        switch value {
        case .null:
            buffer.writeStaticString("\\N")
        case .integer(let number):
            buffer.writeString(String(number))
        case .real(let number):
            buffer.writeString(number.isNaN ? "NaN" : number.isInfinite ? (number < 0 ? "-Infinity" : "Infinity") : "\(number)")
        case .text(let text):
            var text = text
            text.withUTF8 { bytes in
                var start = 0
                for (index, byte) in bytes.enumerated() {
                    let escaped: UInt8
                    switch byte {
                    case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
                    case UInt8(ascii: "\t"): escaped = UInt8(ascii: "t")
                    case UInt8(ascii: "\n"): escaped = UInt8(ascii: "n")
                    case UInt8(ascii: "\r"): escaped = UInt8(ascii: "r")
                    default: continue
                    }
                    buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                    buffer.writeInteger(UInt8(ascii: "\\"))
                    buffer.writeInteger(escaped)
                    start = index + 1
                }
                buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start...]))
            }
        case .bytes(let bytes):
            buffer.writeStaticString("\\\\x")
            let digits: StaticString = "0123456789abcdef"
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bytes.count * 2) { out in
                digits.withUTF8Buffer { hex in
                    for (index, byte) in bytes.enumerated() {
                        out[index * 2] = hex[Int(byte >> 4)]
                        out[index * 2 + 1] = hex[Int(byte & 0xF)]
                    }
                }
                return bytes.count * 2
            }
        }
    }
}
