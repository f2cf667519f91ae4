import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Posts JSON to a chat or paging webhook, retrying with exponential backoff (and the server's `Retry-After`)
/// while the failure may pass: no answer, 429, or a 5xx.
struct Webhook {
    var url: URL
    var attempts: Int
    /// The first wait; each retry doubles it (with up to 50% jitter), never beyond `maxDelay`.
    var initialDelay: Duration = .seconds(1)
    var maxDelay: Duration = .seconds(30)

    func post(_ body: Data) async throws {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = body
        request.timeoutInterval = 10
        var delay = initialDelay
        for attempt in 1...attempts {
            var failure: String
            var wait = delay
            do {
                let (data, response) = try await URLSession.shared.data(for: request)
                let http = response as? HTTPURLResponse
                let status = http?.statusCode ?? 0
                if (200..<300).contains(status) { return }
                failure = "answered \(status): \(String(decoding: data.prefix(200), as: UTF8.self))"
                guard status == 429 || status >= 500 else {
                    throw UsageError("webhook \(url) \(failure)")
                }
                if let retryAfter = http?.value(forHTTPHeaderField: "Retry-After").flatMap(Int.init), retryAfter >= 0 {
                    wait = min(.seconds(retryAfter), maxDelay)
                }
            } catch let error as UsageError {
                throw error
            } catch {
                failure = "could not be reached: \(error.localizedDescription)"
            }
            guard attempt < attempts else {
                throw UsageError("webhook \(url) \(failure) (gave up after \(attempts) attempts)")
            }
            printError("webhook \(url) \(failure); retrying in \(wait)")
            try await Task.sleep(for: wait + wait * Double.random(in: 0...0.5))
            delay = min(delay * 2, maxDelay)
        }
    }
}
