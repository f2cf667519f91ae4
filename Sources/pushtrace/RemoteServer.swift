import ArgumentParser
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `--server`: read commands ask a remote pushtrace (docs/spec.md §8) instead of a local file, with the same output.
struct RemoteOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            """
            Ask this pushtrace server (http://host:port) instead of a local file; the token is read from \
            PUSHTRACE_TOKEN.
            """, valueName: "url"))
    var server: String?

    /// The server to ask, or nil to read the local file.
    func remote() throws -> RemoteServer? {
        guard let server else { return nil }
        guard let url = URL(string: server), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw UsageError("--server \(server) is not an http:// or https:// URL")
        }
        return RemoteServer(base: url, token: ProcessInfo.processInfo.environment["PUSHTRACE_TOKEN"])
    }
}

/// A pushtrace server's read API.
struct RemoteServer {
    var base: URL
    var token: String?

    /// An answer: its status and body.
    struct Answer {
        var status: Int
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// GETs `path` with `query`; throws a ``UsageError`` (exit 2) that says what the server refused and why,
    /// except for the statuses in `accepting`, which are returned.
    func get(_ path: String, query: [String: String?] = [:], accept: String, accepting: Set<Int> = [200]) async throws -> Answer {
        guard var components = URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw UsageError("cannot build a URL from \(base) and \(path)")
        }
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }.sorted { $0.name < $1.name }
        components.queryItems = items.isEmpty ? nil : items
        var request = URLRequest(url: components.url!)
        request.setValue(accept, forHTTPHeaderField: "Accept")
        return try await send(request, accepting: accepting)
    }

    /// The events of a `text/event-stream` at `path`, as they arrive.
    func events(_ path: String, query: [String: String?] = [:]) throws -> AsyncThrowingStream<ServerSentEvent, any Error> {
        guard var components = URLComponents(url: base.appendingPathComponent(path), resolvingAgainstBaseURL: false) else {
            throw UsageError("cannot build a URL from \(base) and \(path)")
        }
        let items = query.compactMap { key, value in value.map { URLQueryItem(name: key, value: $0) } }
        components.queryItems = items.isEmpty ? nil : items
        var request = URLRequest(url: components.url!)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let reader = EventStreamReader(base: base)
        _ = reader.start(request)
        return reader.events
    }

    /// POSTs `body` (NDJSON) to `path`; throws a ``UsageError`` unless the answer is 200.
    func post(_ path: String, ndjson body: Data) async throws -> Answer {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        return try await send(request, accepting: [200])
    }

    private func send(_ request: URLRequest, accepting: Set<Int>) async throws -> Answer {
        var request = request
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let data: Data, response: URLResponse
        do {
            (data, response) = try await URLSession.shared.data(for: request)
        } catch {
            throw UsageError("cannot reach \(base): \(error.localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let answer = Answer(status: status, body: data)
        guard accepting.contains(status) else {
            let error = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
            let message = error?["message"] as? String ?? answer.text
            let hint = status == 401 && token == nil ? " (set PUSHTRACE_TOKEN)" : ""
            throw UsageError("\(base) answered \(status): \(message)\(hint)")
        }
        return answer
    }
}
