import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` at once, and ends the connection after an answer marked `Connection: close`.
///
/// Hummingbird does not answer `Expect: 100-continue`, so curl and other clients wait a second before every large
/// upload. A body that `Content-Length` already declares too large gets no `100 Continue`: the route refuses it with
/// 413 before it is sent. After an answer marked `Connection: close` (a body refused unread), the output side is
/// closed so that the client stops sending, and the connection closes for good once the client has sent
/// ``lingerBytes`` more or ``lingerTime`` has passed: long enough for an honest client to read the answer (closing
/// at once, with its body unread, would reset the connection under it), too short for a stranger to keep the
/// server reading what it sends.
final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// What is read after a closing answer before the connection is closed whole.
    static let lingerBytes = 1 << 20
    static let lingerTime: TimeAmount = .seconds(2)

    private let maxBodyBytes: Int
    private var closeAfterResponse = false
    /// Bytes read since a closing answer went out; nil before one.
    private var lingered: Int?

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if let lingered, case .body(let buffer) = unwrapInboundIn(data) {
            self.lingered = lingered + buffer.readableBytes
            if lingered + buffer.readableBytes > Self.lingerBytes { context.close(promise: nil) }
        }
        if case .head(let head) = unwrapInboundIn(data),
            head.headerFields[.expect]?.lowercased() == "100-continue",
            head.headerFields[.contentLength].flatMap(Int.init).map({ $0 <= maxBodyBytes }) ?? true
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let response) where response.status.kind != .informational:
            closeAfterResponse = response.headerFields[.connection]?.lowercased() == "close"
        case .end where closeAfterResponse:
            closeAfterResponse = false
            let written = promise ?? context.eventLoop.makePromise()
            let channel = context.channel
            lingered = 0
            written.futureResult.whenComplete { _ in
                channel.close(mode: .output, promise: nil)
                channel.eventLoop.scheduleTask(in: Self.lingerTime) { channel.close(promise: nil) }
            }
            context.write(data, promise: written)
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }
}
