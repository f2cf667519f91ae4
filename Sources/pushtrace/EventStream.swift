import Foundation
import PushTraceRecords

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One Server-Sent Event: its name and data.
struct ServerSentEvent: Sendable, Equatable {
    var name: String
    var data: String
}

/// Splits a `text/event-stream` into events as its bytes arrive (the HTML Living Standard's parsing, for the fields
/// pushtrace sends: `event`, `data`, comments).
struct EventStreamParser {
    private var buffer: [UInt8] = []
    private var name = ""
    private var data: [String] = []

    /// The events completed by `bytes`.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        buffer.append(contentsOf: bytes)
        var events: [ServerSentEvent] = []
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = buffer[..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            buffer.removeSubrange(...newline)
            if text.isEmpty {
                if !data.isEmpty {
                    events.append(ServerSentEvent(name: name.isEmpty ? "message" : name, data: data.joined(separator: "\n")))
                }
                name = ""
                data = []
            } else if !text.hasPrefix(":") {
                let (field, value) = Self.field(text)
                if field == "event" { name = value } else if field == "data" { data.append(value) }
            }
        }
        return events
    }

    private static func field(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }
}

/// Reads a server's event stream as it arrives (URLSession hands the body over in pieces to its delegate).
final class EventStreamReader: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Touched only on the session's serial delegate queue.
    private var parser = EventStreamParser()
    private var status = 0
    private var errorBody = Data()
    private let continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
    let events: AsyncThrowingStream<ServerSentEvent, any Error>
    private let base: URL

    init(base: URL) {
        self.base = base
        (events, continuation) = AsyncThrowingStream.makeStream()
    }

    /// Starts reading `request`; the events arrive on ``events``.
    func start(_ request: URLRequest) -> URLSession {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 3600
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        session.dataTask(with: request).resume()
        return session
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard status == 200 else {
            if errorBody.count < 65_536 { errorBody.append(data) }
            return
        }
        for event in parser.feed(data) { continuation.yield(event) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            continuation.finish(throwing: UsageError("cannot reach \(base): \(error.localizedDescription)"))
        } else if status != 200 {
            let fields = (try? JSONSerialization.jsonObject(with: errorBody)) as? [String: Any]
            let message = fields?["message"] as? String ?? String(decoding: errorBody, as: UTF8.self)
            continuation.finish(throwing: UsageError("\(base) answered \(status): \(TerminalText.escaped(message))"))
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
