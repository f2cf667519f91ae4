/// Rows of one upsert gathered and sent as one statement once there are the dialect's ``SQLDialect/rowsPerUpsert``,
/// or when flushed. Each size's text is made once.
struct UpsertBatch {
    /// What a statement's text is made for: the dialect, and how many rows it writes.
    struct Shape {
        let dialect: any SQLDialect
        let count: Int
    }

    private let statement: (Shape) -> String
    private var texts: [Int: String] = [:]
    private var values: [SQLValue] = []
    private var rows = 0

    init(_ statement: @escaping (Shape) -> String) {
        self.statement = statement
    }

    /// The statement's text for `shape`, made once per size.
    mutating func text(_ shape: Shape) -> String {
        if let text = texts[shape.count] { return text }
        let text = statement(shape)
        texts[shape.count] = text
        return text
    }

    mutating func add(_ row: [SQLValue], to session: some SQLSession) throws {
        values += row
        rows += 1
        if rows >= session.dialect.rowsPerUpsert { try flush(to: session) }
    }

    /// Sends the rows gathered so far, if any.
    mutating func flush(to session: some SQLSession) throws {
        guard rows > 0 else { return }
        try session.send(rendered: text(Shape(dialect: session.dialect, count: rows)), values)
        values.removeAll(keepingCapacity: true)
        rows = 0
    }
}
