import Foundation

/// How far into each record file the uploader has already packed records into bundles (bytes), kept in
/// `state/cursors.json` and replaced atomically. Offsets only grow, so applying an advance twice is harmless.
struct UploadCursors {
    private(set) var offsets: [String: Int64]
    private let url: URL

    init(container: AgentContainer) {
        url = container.state.appendingPathComponent("cursors.json")
        offsets = (try? JSONDecoder().decode([String: Int64].self, from: Data(contentsOf: url))) ?? [:]
    }

    subscript(file: String) -> Int64 { offsets[file] ?? 0 }

    mutating func advance(_ file: String, to offset: Int64) {
        offsets[file] = max(offsets[file] ?? 0, offset)
    }

    mutating func forget(_ file: String) { offsets[file] = nil }

    func save() throws {
        try JSONEncoder().encode(offsets).writeProtected(to: url)
    }
}
