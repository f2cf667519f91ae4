import PushTraceRecords

/// A plain-text table with aligned columns, for terminal output.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: [String]) { self.headers = headers }

    /// Adds a row. Cells may hold what a device sent: control characters are shown escaped, never sent to the
    /// terminal, and a newline cannot split the row.
    mutating func add(_ row: [String]) { rows.append(row.map(TerminalText.escaped)) }

    var rendered: String {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
