import Foundation
import HummingbirdTesting
import Logging
import PushTraceTestSupport
import Testing

@testable import PushTraceServer

/// `openapi.json` against the server: every route documented and nothing documented that is not routed, and the
/// document served at `GET /openapi.json` as the repository holds it.
@Suite struct OpenAPIDocumentTests {
    /// The repository's `openapi.json` (a link to the copy the server target embeds).
    static let repositoryDocument = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../openapi.json").standardizedFileURL

    static func document() throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(OpenAPIDocument.bytes)) as? [String: Any])
    }

    @Test func documentsEveryRouteAndOnlyTheRoutes() throws {
        let folder = try TemporaryStore()
        let settings = ServerSettings()
        let writer = IngestWriter(
            store: folder.store, settings: settings, metrics: ServerMetrics(),
            logger: Logger(label: "openapi-test"))
        let router = ServerApplication.makeRouter(
            store: folder.store, blocking: BlockingWork(threads: 1), settings: settings, metrics: ServerMetrics(),
            writer: writer)
        // The console's pages are HTML for browsers, described in docs/console.md rather than here.
        let routed = Set(
            router.routes.map { "\($0.method.rawValue) \($0.path.description)" }.filter { !$0.contains(" /ui") })

        let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        let paths = try #require(Self.document()["paths"] as? [String: [String: Any]])
        let documented = Set(
            paths.flatMap { path, item in
                item.keys.filter(methods.contains).map { "\($0.uppercased()) \(path)" }
            })
        #expect(routed.subtracting(documented).isEmpty, "routed but not in openapi.json")
        #expect(documented.subtracting(routed).isEmpty, "in openapi.json but not routed")
        #expect(routed.count == 10)
    }

    @Test func documentsEveryErrorStatusWithTheErrorBody() throws {
        let paths = try #require(Self.document()["paths"] as? [String: [String: [String: Any]]])
        for (path, item) in paths {
            for (method, operation) in item {
                let responses = try #require(operation["responses"] as? [String: Any], "\(method) \(path)")
                #expect(responses.keys.contains("200"), "\(method) \(path) documents no 200")
                // Every route but the open ones takes a token: 401 must be documented for them.
                let open = ["/healthz", "/openapi.json"].contains(path)
                #expect(open || responses.keys.contains("401"), "\(method) \(path) documents no 401")
            }
        }
    }

    @Test func servesTheRepositorysDocument() async throws {
        let onDisk = try [UInt8](Data(contentsOf: Self.repositoryDocument))
        #expect(onDisk == OpenAPIDocument.bytes, "openapi.json differs from the document the server embeds")
        let server = try await TestServer()
        try await server.run { client in
            let answer = try await client.get("/openapi.json", token: nil)
            #expect(answer.status == .ok)
            #expect(answer.headers[.contentType] == "application/json")
            #expect(Array(answer.body.readableBytesView) == onDisk)
            let head = try await client.head("/openapi.json", token: nil)
            #expect(head.status == .ok)
            #expect(head.body.readableBytes == 0)
        }
    }
}
