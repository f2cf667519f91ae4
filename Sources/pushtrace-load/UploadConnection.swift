import NIOCore
import NIOHTTP1
import NIOPosix

/// One uploader's keep-alive HTTP/1.1 connection: one request at a time, each answer collected whole.
///
/// An uploader needs no connection pool, redirects or per-request state machines; AsyncHTTPClient's were most of
/// the load generator's CPU, which on a shared machine is taken from the server it measures.
struct UploadConnection {
    /// What went wrong on the connection itself (an HTTP error status is an answer, not an error).
    enum Failure: Error, CustomStringConvertible {
        case closedBeforeAnswer
        case bodyOverLimit(Int)

        var description: String {
            switch self {
            case .closedBeforeAnswer: "the server closed the connection before answering"
            case .bodyOverLimit(let limit): "the answer's body is over \(limit) bytes"
            }
        }
    }

    /// An answer: its status, headers and body.
    struct Answer {
        var head: HTTPResponseHead
        var body: ByteBuffer
    }

    private typealias Channel = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    private let host: String
    private var answers: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let requests: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>

    /// Connects to `host:port`, runs `body` with the connection, and closes it.
    static func with<Result>(
        host: String, port: Int,
        _ body: (inout UploadConnection) async throws -> Result
    ) async throws -> Result {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try Channel(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var connection = UploadConnection(host: host, answers: inbound.makeAsyncIterator(), requests: outbound)
            return try await body(&connection)
        }
    }

    /// Sends a POST of `body` to `path` and waits for the whole answer (its body up to `limit` bytes).
    mutating func post(_ path: String, headers: HTTPHeaders, body: ByteBuffer, limit: Int = 1 << 20) async throws -> Answer {
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path, headers: headers)
        head.headers.add(name: "Host", value: host)
        head.headers.add(name: "Content-Length", value: String(body.readableBytes))
        try await requests.write(contentsOf: [.head(head), .body(.byteBuffer(body)), .end(nil)])
        var answer: HTTPResponseHead?
        var collected = ByteBuffer()
        while let part = try await answers.next() {
            switch part {
            case .head(let received):
                answer = received
            case .body(var chunk):
                guard collected.readableBytes + chunk.readableBytes <= limit else { throw Failure.bodyOverLimit(limit) }
                collected.writeBuffer(&chunk)
            case .end:
                guard let answer else { throw Failure.closedBeforeAnswer }
                return Answer(head: answer, body: collected)
            }
        }
        throw Failure.closedBeforeAnswer
    }
}
