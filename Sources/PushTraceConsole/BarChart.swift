/// A horizontal bar chart drawn as inline SVG: one row per label, a bar for the period shown and, when given, a
/// lighter one for the period before. Its title and description are its text alternative; the page's table beside
/// it holds the same figures for whoever cannot see it.
public struct BarChart: Sendable {
    /// One row: its label, the value now and the value before.
    public struct Row: Sendable {
        public var label: String
        public var value: Double
        public var before: Double?
        /// The value as written at the end of its bar (`12`, `4.2%`).
        public var valueText: String
        /// The value before, as written in the chart's description.
        public var beforeText: String?

        public init(label: String, value: Double, before: Double? = nil, valueText: String, beforeText: String? = nil) {
            self.label = label
            self.value = value
            self.before = before
            self.valueText = valueText
            self.beforeText = beforeText
        }
    }

    public var id: String
    public var title: String
    public var rows: [Row]
    /// The legend of the two bars, when rows have a `before`.
    public var legend: (now: String, before: String)?

    public init(id: String, title: String, rows: [Row], legend: (now: String, before: String)? = nil) {
        self.id = id
        self.title = title
        self.rows = rows
        self.legend = legend
    }

    /// The chart's SVG markup, every text escaped.
    public var svg: String {
        let labelWidth = 230.0
        let barArea = 420.0
        let rowHeight = legend == nil ? 22.0 : 30.0
        let top = legend == nil ? 6.0 : 28.0
        let height = top + Double(rows.count) * rowHeight + 6
        let largest = max(rows.map { max($0.value, $0.before ?? 0) }.max() ?? 0, 1e-9)
        let description = rows.map { row in
            "\(row.label): \(row.valueText)" + (row.beforeText.map { ", \(legend?.before ?? "before") \($0)" } ?? "")
        }.joined(separator: "; ")
        var out = """
            <svg class="chart" id="\(HTMLText.escaped(id))" role="img" aria-labelledby="\(id)-title \(id)-desc" \
            viewBox="0 0 720 \(format(height))" width="720" height="\(format(height))" xmlns="http://www.w3.org/2000/svg">\
            <title id="\(id)-title">\(HTMLText.safe(title))</title><desc id="\(id)-desc">\(HTMLText.safe(description))</desc>
            """
        if let legend {
            out += """
                <rect class="legend-now" x="\(format(labelWidth))" y="6" width="12" height="12"/>\
                <text x="\(format(labelWidth + 18))" y="16">\(HTMLText.safe(legend.now))</text>\
                <rect class="legend-before" x="\(format(labelWidth + 160))" y="6" width="12" height="12"/>\
                <text x="\(format(labelWidth + 178))" y="16">\(HTMLText.safe(legend.before))</text>
                """
        }
        for (index, row) in rows.enumerated() {
            let y = top + Double(index) * rowHeight
            let label = row.label.count > 32 ? String(row.label.prefix(31)) + "…" : row.label
            out += "<text x=\"\(format(labelWidth - 8))\" y=\"\(format(y + 14))\" text-anchor=\"end\">\(HTMLText.safe(label))</text>"
            let barHeight = legend == nil ? 16.0 : 12.0
            let width = max(row.value / largest * barArea, row.value > 0 ? 1 : 0)
            out +=
                "<rect class=\"bar-now\" x=\"\(format(labelWidth))\" y=\"\(format(y + 3))\" width=\"\(format(width))\" height=\"\(format(barHeight))\"/>"
            out += "<text x=\"\(format(labelWidth + width + 6))\" y=\"\(format(y + 15))\">\(HTMLText.safe(row.valueText))</text>"
            if let before = row.before {
                let beforeWidth = max(before / largest * barArea, before > 0 ? 1 : 0)
                out +=
                    "<rect class=\"bar-before\" x=\"\(format(labelWidth))\" y=\"\(format(y + 3 + barHeight))\" width=\"\(format(beforeWidth))\" height=\"\(format(barHeight - 4))\"/>"
            }
        }
        out +=
            "<line class=\"axis\" x1=\"\(format(labelWidth))\" y1=\"\(format(top))\" x2=\"\(format(labelWidth))\" y2=\"\(format(height - 6))\"/></svg>"
        return out
    }
}

/// A coordinate as SVG writes it: at most one decimal.
func format(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
}
