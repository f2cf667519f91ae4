/// The OpenAPI 3.1 document of the HTTP API: `Sources/PushTraceServer/openapi.json` (the repository's `openapi.json`
/// links to it), compiled into the binary by SwiftPM's `embedInCode` so that a server installed as one file still
/// answers `GET /openapi.json`. `OpenAPIDocumentTests` holds the document and the router to each other.
public enum OpenAPIDocument {
    /// The document's bytes, as `GET /openapi.json` answers them.
    public static var bytes: [UInt8] { PackageResources.openapi_json }
}
