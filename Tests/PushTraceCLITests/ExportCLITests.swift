import Foundation
import PushTraceGzip
import Testing

/// `pushtrace export`: every accepted line back, byte for byte, in the order stored, by app, time and notification.
@Suite("CLI: export")
struct ExportCLITests {
    /// The non-manifest lines of every bundle file under `folder`, per file, in order.
    static func inputLines(_ folder: URL) throws -> [[Data]] {
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "gz" || $0.pathExtension == "ndjson" }
        return try files.map { file in
            var data = try Data(contentsOf: file)
            if data.starts(with: [0x1f, 0x8b]) {
                var plain = Data()
                let inflater = try Inflater(format: .gzip)
                try data.withUnsafeBytes { try inflater.consume($0) { plain.append(contentsOf: $0) } }
                try inflater.finish()
                data = plain
            }
            return Array(data.split(separator: UInt8(ascii: "\n")).map { Data($0) }.dropFirst())
        }
    }

    @Test(
        "every accepted line comes back byte for byte, each bundle's in its order; filters by app, time and notification; --corrected adds the stored time"
    )
    func roundTrip() throws {
        let work = try WorkFolder()
        #expect(try work.run("simulate", "--out", "sim", "--notifications", "60", "--end", "2026-11-16T00:00:00Z").status == 0)
        #expect(try work.run("ingest", "sim").status == 0)
        let all = try work.run("export")
        #expect(all.status == 0, "\(all.stderr)")
        let exported = Data(all.stdout.utf8).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map {
            Data($0)
        }
        let input = try Self.inputLines(work.url.appendingPathComponent("sim"))
        #expect(exported.count == input.reduce(0) { $0 + $1.count })
        #expect(
            Dictionary(exported.map { ($0, 1) }, uniquingKeysWith: +) == Dictionary(input.joined().map { ($0, 1) }, uniquingKeysWith: +))
        // The order stored: each bundle's lines in their own order (lines that occur once: every bundle repeats
        // its device's config records).
        let occurrences = Dictionary(exported.map { ($0, 1) }, uniquingKeysWith: +)
        let position = Dictionary(exported.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for lines in input where lines.count > 1 {
            let places = lines.filter { occurrences[$0] == 1 }.compactMap { position[$0] }
            #expect(places == places.sorted())
        }

        // One notification's lines, with their stored times.
        let sql = try work.run(
            "sql", "--format", "json",
            "SELECT app_id, notification_id, records AS n, first_ts AS first "
                + "FROM notification ORDER BY n DESC LIMIT 1")
        let row = try #require((try JSONSerialization.jsonObject(with: Data(sql.stdout.utf8)) as? [[String: Any]])?.first)
        let id = try #require(row["notification_id"] as? String), app = try #require(row["app_id"] as? String)
        let one = try work.run("export", "--notification", id.lowercased(), "--corrected")
        let lines = one.stdout.split(separator: "\n")
        #expect(lines.count == (row["n"] as? NSNumber)?.intValue)
        let times = lines.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["corrected_ts"] as? NSNumber
        }.map(\.int64Value)
        #expect(times.count == lines.count && times.min() == (row["first"] as? NSNumber)?.int64Value)

        // An app and a day: exactly the lines the store keeps for them.
        let day = try work.run("export", "--app", app, "--since", "2026-11-10", "--until", "2026-11-11")
        let inDay = try work.run("export", "--app", app, "--corrected").stdout.split(separator: "\n").filter { line in
            let ts = (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["corrected_ts"] as? NSNumber
            return ts.map { (1_762_732_800_000..<1_762_819_200_000).contains($0.int64Value) } ?? false
        }
        #expect(day.stdout.split(separator: "\n").count == inDay.count)

        // Nothing for a misspelt app (2) or an unknown notification (1), said on stderr.
        let misspelt = try work.run("export", "--app", "net.rorklab.dailypik")
        #expect(misspelt.status == 2 && misspelt.stderr.contains("no notifications of app net.rorklab.dailypik"))
        let unknown = try work.run("export", "--notification", "nope")
        #expect(unknown.status == 1 && unknown.stdout.isEmpty && unknown.stderr.contains("nothing is stored for notification nope"))
        #expect(try work.run("export", "--since", "2026-11-12", "--until", "2026-11-11").status == 2)
    }
}
