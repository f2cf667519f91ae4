import PushTraceRecords

/// The delivery report as plain text (80 columns) or Markdown: one list of blocks, two renderings.
public enum ReportText {
    /// Plain text that reads well at 80 columns.
    public static func text(_ report: DeliveryReport) -> String {
        blocks(report).map { block in
            switch block {
            case .title(let text): return text + "\n" + String(repeating: "=", count: min(80, text.count))
            case .heading(let text): return "\n" + text
            case .line(let text): return "  " + text
            case .table(let table): return table.aligned().map { "  " + $0 }.joined(separator: "\n")
            }
        }.joined(separator: "\n") + "\n"
    }

    /// GitHub-flavoured Markdown, for a wiki page or a pull request.
    public static func markdown(_ report: DeliveryReport) -> String {
        blocks(report).map { block in
            switch block {
            case .title(let text): return "# " + text + "\n"
            case .heading(let text): return "\n## " + text + "\n"
            case .line(let text): return text + "  "
            case .table(let table): return "\n" + table.markdown()
            }
        }.joined(separator: "\n") + "\n"
    }

    enum Block {
        case title(String)
        case heading(String)
        case line(String)
        case table(Table)
    }

    static func blocks(_ report: DeliveryReport) -> [Block] {
        let now = report.figures, before = report.previous
        var blocks: [Block] = [
            .title("Delivery report: \(TerminalText.escaped(report.appID)), \(periodText(now.period))"),
            .line(
                "\(grouped(now.notifications)) notifications, \(changeText(now.notifications, before.notifications)) "
                    + "against \(before.period.label) (\(grouped(before.notifications)))"),
            .heading("Funnel"),
        ]
        var funnel = Table(["step", "count", "rate", "of", "change"], right: [1, 2, 4])
        for (step, change) in zip(now.funnel, report.funnelChange) {
            funnel.add([
                stepNames[step.step] ?? step.step, grouped(step.count), percent(step.rate),
                stepNames[step.of] ?? step.of, points(change.points),
            ])
        }
        blocks.append(.table(funnel))

        let service = now.service
        blocks += [
            .heading("Service extension"),
            .line(
                "ran \(grouped(service.ran)), delivered \(grouped(service.delivered)), timed out "
                    + "\(grouped(service.timeouts)) (\(percent(service.timeoutRate))), crashed \(grouped(service.crashes)) "
                    + "(\(percent(service.crashRate)))"),
            .line(
                service.durationMs.map { "duration p50 \(grouped($0.p50)) ms, p90 \(grouped($0.p90)) ms, p99 \(grouped($0.p99)) ms" }
                    ?? "duration: no runs"),
            .line(
                "timeout rate by day \(sparkline(report.timeoutRateByDay.map(\.rate)))  "
                    + (report.timeoutRateByDay.max { ($0.rate ?? -1) < ($1.rate ?? -1) }.flatMap { worst in
                        worst.rate.map { "highest \(percent($0)) on \(worst.date)" }
                    } ?? "no runs")),
        ]

        let attachments = now.attachments
        blocks += [
            .heading("Attachments"),
            .line(
                "\(grouped(attachments.downloads)) downloads (\(bytesText(attachments.downloadBytes))), "
                    + "\(grouped(attachments.failed)) failed"),
            .line(
                "sizes: "
                    + zip(["<100 kB", "<1 MB", "<10 MB", ">=10 MB"], AttachmentFigures.sizeBands)
                    .map { "\($0) \(grouped(attachments.sizes[$1] ?? 0))" }.joined(separator: ", ")),
        ]
        if !attachments.failures.isEmpty {
            var failures = Table(["failure", "notifications"], right: [1])
            for (reason, count) in attachments.failures.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
                failures.add([reason, grouped(count)])
            }
            blocks.append(.table(failures))
        }

        blocks.append(.heading("Causes (pushtrace why ID)"))
        var causes = Table(["cause", "count", "prev", "example"], right: [1, 2])
        for (cause, count) in now.causes.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            causes.add([cause, grouped(count), grouped(before.causes[cause] ?? 0), report.causeExamples[cause] ?? "-"])
        }
        blocks.append(.table(causes))

        // Who could be reached: the devices of the period, and what their users' settings allow (docs/protocol.md).
        blocks.append(.heading("Audience (devices, by their latest notification settings)"))
        let audience = now.audience, earlier = before.audience
        var people = Table(["", "devices", "share", "prev"], right: [1, 2, 3])
        people.add(["active", grouped(audience.devices), "", grouped(earlier.devices)])
        people.add([
            "with settings", grouped(audience.withSettings), share(audience.withSettings, of: audience.devices),
            grouped(earlier.withSettings),
        ])
        for (name, count, previous) in [
            ("notifications disabled", audience.notificationsDisabled, earlier.notificationsDisabled),
            ("provisional", audience.provisional, earlier.provisional),
            ("Summary on", audience.scheduledDelivery, earlier.scheduledDelivery),
            ("time-sensitive off", audience.timeSensitiveDisabled, earlier.timeSensitiveDisabled),
        ] {
            people.add([name, grouped(count), share(count, of: audience.withSettings), grouped(previous)])
        }
        blocks.append(audience.devices == 0 ? .line("no device recorded anything") : .table(people))

        for (title, rows) in [
            ("By category", report.byCategory), ("By app version", report.byAppVersion),
            ("By OS version", report.byOSVersion),
        ] {
            blocks.append(.heading(title))
            var table = Table(["", "notifs", "ran", "timeouts", "rate", "crashes", "rate", ""], right: [1, 2, 3, 4, 5, 6])
            for row in rows {
                table.add([
                    row.name, grouped(row.notifications), grouped(row.serviceRan), grouped(row.timeouts),
                    percent(row.timeoutRate), grouped(row.crashes), percent(row.crashRate),
                    row.flags.isEmpty ? "" : "<< " + row.flags.joined(separator: ", ") + " x2",
                ])
            }
            blocks.append(.table(table))
        }

        blocks.append(.heading("Actions"))
        var actions = Table(["action", "doNotDismiss", "dismiss", "andForward", "total"], right: [1, 2, 3, 4])
        var byAction: [String: [String: Int]] = [:]
        for entry in report.actions { byAction[entry.action, default: [:]][entry.response, default: 0] += entry.count }
        for (action, responses) in byAction.sorted(by: { ($0.value.values.reduce(0, +), $1.key) > ($1.value.values.reduce(0, +), $0.key) })
        {
            actions.add([
                action, grouped(responses["doNotDismiss"] ?? 0), grouped(responses["dismiss"] ?? 0),
                grouped(responses["dismissAndForwardAction"] ?? 0), grouped(responses.values.reduce(0, +)),
            ])
        }
        blocks.append(byAction.isEmpty ? .line("no actions") : .table(actions))
        return blocks
    }

    /// `count` as a share of `total` ("12.5%"), or "-" of none.
    private static func share(_ count: Int, of total: Int) -> String {
        percent(total == 0 ? nil : Double(count) / Double(total))
    }

    private static let stepNames = [
        "notifications": "notifications", "sent": "sent", "apns_accepted": "accepted by APNs",
        "reached_device": "reached a device", "service_ran": "service ext. ran", "delivered": "delivered",
        "timed_out": "timed out", "crashed": "crashed", "expanded": "expanded", "acted": "acted on",
    ]

    private static func periodText(_ period: ReportPeriod) -> String {
        let last = ReportPeriod.dateText(period.end - 1)
        let first = ReportPeriod.dateText(period.start)
        return period.label.contains("-W") ? "\(period.label) (\(first) to \(last))" : "\(first) to \(last)"
    }

    /// `▲ 12.0%` / `▼ 3.5%` / `=` for a count against the one before.
    static func changeText(_ now: Int, _ before: Int) -> String {
        guard before > 0 else { return now > 0 ? "new" : "none" }
        let change = Double(now - before) / Double(before) * 100
        if abs(change) < 0.05 { return "=" }
        return (change > 0 ? "▲ " : "▼ ") + fixed(abs(change), 1) + "%"
    }

    /// `▲ 0.4 pp` for a change of rate in percentage points.
    static func points(_ change: Double?) -> String {
        guard let change else { return "-" }
        if abs(change) < 0.05 { return "=" }
        return (change > 0 ? "▲ " : "▼ ") + fixed(abs(change), 1) + " pp"
    }

    static func percent(_ rate: Double?) -> String {
        rate.map { fixed($0 * 100, 1) + "%" } ?? "-"
    }

    /// One bar per day, from the lowest to the highest rate of the period; `·` for a day without runs.
    static func sparkline(_ rates: [Double?]) -> String {
        let bars = Array("▁▂▃▄▅▆▇█")
        let top = rates.compactMap { $0 }.max() ?? 0
        return String(
            rates.map { rate -> Character in
                guard let rate else { return "·" }
                guard top > 0 else { return bars[0] }
                return bars[min(bars.count - 1, Int((rate / top * Double(bars.count - 1)).rounded()))]
            })
    }

    static func grouped<T: BinaryInteger>(_ value: T) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    static func bytesText(_ bytes: Int) -> String {
        if bytes >= 1_000_000_000 { return fixed(Double(bytes) / 1e9, 1) + " GB" }
        if bytes >= 1_000_000 { return fixed(Double(bytes) / 1e6, 1) + " MB" }
        return fixed(Double(bytes) / 1e3, 1) + " kB"
    }

    /// `value` with `digits` decimals, without Foundation's locale-dependent formatting.
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let whole = scaled / Int64(scale), fraction = scaled % Int64(scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fractionText = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }
}

/// A table with a header, rendered with aligned columns (text) or pipes (Markdown).
struct Table {
    var headers: [String]
    /// Columns aligned to the right (numbers).
    var right: Set<Int>
    var rows: [[String]] = []

    init(_ headers: [String], right: Set<Int>) {
        self.headers = headers
        self.right = right
    }

    /// Adds a row; cells hold names a device or the backend sent (categories, versions, actions), shown escaped.
    mutating func add(_ row: [String]) { rows.append(row.map(TerminalText.escaped)) }

    func aligned() -> [String] {
        let all = [headers] + rows
        let widths = headers.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.indices.map { column in
                let padding = String(repeating: " ", count: widths[column] - row[column].count)
                return right.contains(column) ? padding + row[column] : row[column] + padding
            }.joined(separator: "  ").trailingSpacesRemoved
        }
    }

    func markdown() -> String {
        let header = "| " + headers.joined(separator: " | ") + " |"
        let rule = "|" + headers.indices.map { right.contains($0) ? "---:|" : "---|" }.joined()
        return ([header, rule] + rows.map { "| " + $0.map { $0.replacingPipes }.joined(separator: " | ") + " |" })
            .joined(separator: "\n")
    }
}

private extension String {
    var trailingSpacesRemoved: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }

    var replacingPipes: String { split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|") }
}
