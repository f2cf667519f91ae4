import Foundation
import HTTPTypes
import Hummingbird
import PushTraceCore
import PushTraceRecords
import PushTraceStore

/// An error answered to an HTTP client: its status and the JSON body of docs/spec.md §8, `{"error", "message"}`.
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    /// A stable, machine-readable code.
    public var code: String
    /// What was wrong, in a sentence a developer can act on.
    public var message: String
    /// When the client should try again (429, 503), in seconds.
    public var retryAfter: Int?
    /// Close the connection after the answer (the body was refused unread).
    public var closesConnection = false
    /// The methods the path takes (405), sent as `Allow`.
    public var allow: [String] = []
    /// The request's ID, as the server's log names it: in the body and the `X-Request-ID` header.
    public var requestID: String?
    /// What the server's log says of the refusal beyond ``message`` (a database's own words); never sent.
    public var logDetail: String?

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if closesConnection { headers[.connection] = "close" }
        if !allow.isEmpty { headers[.allow] = allow.joined(separator: ", ") }
        var fields: [String: JSONValue] = ["error": .string(code), "message": .string(message)]
        if let requestID {
            headers[HTTPField.Name("X-Request-ID")!] = requestID
            fields["request_id"] = .string(requestID)
        }
        let body = JSONValue.object(fields).jsonText(pretty: false) + "\n"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

extension APIError {
    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad_request", message) }
    static func undecodable(_ message: String) -> APIError { APIError(.badRequest, "undecodable", message) }
    static func unauthorized(_ message: String) -> APIError { APIError(.unauthorized, "unauthorized", message) }
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, "forbidden", message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not_found", message) }
    static func tooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, "too_large", message) }
    static func unsupportedEncoding(_ message: String) -> APIError {
        APIError(.unsupportedMediaType, "unsupported_encoding", message)
    }
    static func overloaded(retryAfter: Int) -> APIError {
        APIError(.tooManyRequests, "overloaded", "the ingest queue is full; retry after \(retryAfter) s", retryAfter: retryAfter)
    }
    static func unavailable(_ message: String, retryAfter: Int) -> APIError {
        APIError(.serviceUnavailable, "unavailable", message, retryAfter: retryAfter)
    }
}

extension APIError {
    /// The answer to a bundle refused whole by the decoder (docs/spec.md §8).
    init(bundleError error: BundleError) {
        let message = error.line.map { "line \($0): \(error.message)" } ?? error.message
        switch error.kind {
        case .undecodable: self = .undecodable(message)
        case .tooLarge: self = .tooLarge(message)
        case .unsupportedEncoding: self = .unsupportedEncoding(message)
        }
    }
}

extension APIError {
    /// The answer to work the store cannot do now (``StoreError/Code/isUnavailable``): 503 with `Retry-After`, which
    /// clients retry, rather than a final 500. It says "the store cannot answer", what was not done (`failed`) and
    /// why in the server's own words, never the database's text, nor a path or SQL: those go to the log, under the
    /// request ID the answer carries. Nil for any other error. Every route that reaches the store answers its
    /// failures through this.
    /// What `read` answers. A store that cannot answer now (PostgreSQL unreachable, SQLite's lock held past its busy
    /// timeout) is answered 503 with `Retry-After`, which clients retry, rather than a final 500.
    static func reading<Value>(_ store: any StoreAccess, _ read: () async throws -> Value) async throws -> Value {
        do {
            return try await read()
        } catch {
            throw storeUnavailable(error, of: store, "nothing was read", retryAfter: 5) ?? error
        }
    }

    static func storeUnavailable(
        _ error: any Error, of store: any StoreAccess, _ failed: String, retryAfter: Int
    ) -> APIError? {
        guard let failure = store.storeError(error), failure.code.isUnavailable, let reason = failure.clientReason else {
            return nil
        }
        var answer = APIError.unavailable(
            "the store cannot answer (\(failed)): \(reason); the server's log has more under this request_id",
            retryAfter: retryAfter)
        answer.logDetail = "\(failure)"
        return answer
    }
}
