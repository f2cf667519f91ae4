import Foundation
import PushTracePostgres
import PushTraceTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// docs/spec.md §9: any number of `pushtrace serve` processes on one PostgreSQL database, any upload to any of them.
@Suite("Two servers on one PostgreSQL database")
struct ScaleOutTests {
    @Test(
        "uploads spread over two serve processes, some sent to both at once: each bundle stored once, and every why, search and report the same from either server",
        .enabled(if: TestEngine.postgresCluster != nil))
    func twoServersOneDatabase() async throws {
        let cluster = try #require(TestEngine.postgresCluster)
        let name = "pt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let url = try PostgresDatabases.create(name, cluster: cluster)
        defer { try? PostgresDatabases.drop(name, cluster: cluster) }
        let work = try WorkFolder()
        // The simulated period ends in this hour, so that the servers' per-hour gauge has something to compare.
        let end = ISO8601DateFormatter().string(from: Date())
        #expect(
            try work.run(
                "simulate", "--out", "bundles", "--notifications", "240", "--seed", "5", "--days", "2",
                "--end", end
            ).status == 0)
        let token = try work.run(["token", "create", "--db", url, "--scope", "admin"], environment: [:])
        #expect(token.status == 0, "\(token.stderr)")
        let bearer = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let servers = [
            try await ServerProcess(arguments: ["--db", url], in: work.url),
            try await ServerProcess(arguments: ["--db", url], in: work.url),
        ]

        let folder = work.url.appendingPathComponent("bundles")
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.contains(".ndjson") }.sorted()
        #expect(files.count > 50)
        // Every file to one server, alternately; every fifth to both at once.
        let answers = try await withThrowingTaskGroup(of: [Answer].self) { group in
            for (index, file) in files.enumerated() {
                let targets = index % 5 == 0 ? servers : [servers[index % 2]]
                group.addTask {
                    try await withThrowingTaskGroup(of: Answer.self) { both in
                        for server in targets {
                            both.addTask { try await Self.upload(folder.appendingPathComponent(file), to: server.url, token: bearer) }
                        }
                        return try await both.reduce(into: []) { $0.append($1) }
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.joined().allSatisfy { $0.status == 200 })
        for pair in answers where pair.count == 2 {
            // Sent to both at once: stored by one, a duplicate at the other, with the same counts.
            #expect(pair.filter(\.duplicate).count == 1)
            #expect(pair[0].accepted == pair[1].accepted)
        }
        let stored = try work.run(["sql", "--db", url, "--format", "csv", "SELECT count(*) FROM bundle"], environment: [:])
        #expect(stored.stdout.split(separator: "\n").last.map(String.init) == "\(files.count)")

        // Both servers settle; wait until nothing is left to settle.
        for _ in 0..<200 {
            let waiting = try work.run(
                [
                    "sql", "--db", url, "--format", "csv",
                    "SELECT count(*) FROM notification WHERE cause IS NULL",
                ], environment: [:])
            if waiting.stdout.split(separator: "\n").last == "0" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let environment = ["PUSHTRACE_TOKEN": bearer]
        let search = ["search", "--limit", "10000", "--format", "json"]
        let listed = try work.run(search + ["--server", servers[0].url], environment: environment)
        #expect(listed.status == 0)
        #expect(try work.run(search + ["--server", servers[1].url], environment: environment).stdout == listed.stdout)
        #expect(try work.run(search + ["--db", url], environment: [:]).stdout == listed.stdout)
        let summaries = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(summaries.count >= 240)
        #expect(summaries.allSatisfy { $0["cause"] is String })
        for summary in summaries.prefix(60) {
            let id = try #require(summary["notification_id"] as? String), app = try #require(summary["app_id"] as? String)
            let why = ["why", id, "--app", app, "--format", "json"]
            let first = try work.run(why + ["--server", servers[0].url], environment: environment)
            #expect(first.status == 0)
            #expect(try work.run(why + ["--server", servers[1].url], environment: environment).stdout == first.stdout)
        }
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = calendar.dateComponents([.yearForWeekOfYear, .weekOfYear], from: Date())
        let week = String(format: "%04d-W%02d", now.yearForWeekOfYear!, now.weekOfYear!)
        for app in Set(summaries.compactMap { $0["app_id"] as? String }) {
            var reports: [Data] = []
            for server in servers {
                var request = URLRequest(url: URL(string: "\(server.url)/v1/reports/weekly?app=\(app)&week=\(week)")!)
                request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
                let (body, response) = try await URLSession.shared.data(for: request)
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                reports.append(body)
            }
            #expect(reports[0] == reports[1], "report \(app) \(week)")
        }
        // The settled notifications of this hour, as each server exports them (each refreshes its gauge within
        // seconds of another's settling).
        var gauges: [[String]] = []
        for _ in 0..<30 {
            gauges = []
            for server in servers {
                var request = URLRequest(url: URL(string: "\(server.url)/metrics")!)
                request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
                let (body, _) = try await URLSession.shared.data(for: request)
                // A series a server saw drop to none stays exported at 0; one the other never saw is not exported.
                gauges.append(
                    String(decoding: body, as: UTF8.self).split(separator: "\n")
                        .filter { $0.hasPrefix("pushtrace_notifications{") && !$0.hasSuffix(" 0.0") }.map(String.init).sorted())
            }
            if gauges[0] == gauges[1] && !gauges[0].isEmpty { break }
            try await Task.sleep(for: .seconds(1))
        }
        #expect(gauges[0] == gauges[1])
        #expect(!gauges[0].isEmpty)

        // Live follow on one server sees an upload that reached the other.
        let followed = "follow-across-\(UUID().uuidString.lowercased())"
        let sentAt = Int64(Date().timeIntervalSince1970 * 1000) - 40_000
        try await WhyFollowCLITests.post(
            WhyFollowCLITests.sentLines(followed, at: sentAt), to: "\(servers[0].url)/v1/events", token: bearer)
        let follower = try WhyFollowCLITests.Follower([followed, "--server", servers[0].url], environment: environment, in: work)
        try await follower.waitFor(WhyFollowCLITests.waiting)
        try await WhyFollowCLITests.post(
            WhyFollowCLITests.deviceLines(followed, at: sentAt), to: "\(servers[1].url)/v1/bundles", token: bearer)
        WhyFollowCLITests.expectFollowed(try await follower.finish())

        // A console session made by one server works on the other: both check it against the store alone.
        let cookie = try await Self.signIn(servers[0].url, token: bearer)
        var page = URLRequest(url: URL(string: "\(servers[1].url)/ui/alerts")!)
        page.setValue(cookie, forHTTPHeaderField: "Cookie")
        let (_, pageResponse) = try await URLSession.shared.data(for: page)
        #expect((pageResponse as? HTTPURLResponse)?.statusCode == 200)
        #expect(servers.map { $0.stop() } == [0, 0])
        let check = try work.run(["check", "--db", url], environment: [:])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    }

    @Test(
        "two servers through PgBouncer in transaction pooling: every upload stored, why the same from both and from the CLI; one leads the alert monitor, and when it is killed the other takes over within three evaluations",
        .enabled(if: TestEngine.postgresCluster != nil && ProcessInfo.processInfo.environment["PUSHTRACE_TEST_PGBOUNCER"] != nil))
    func twoServersThroughTransactionPooler() async throws {
        let cluster = try #require(TestEngine.postgresCluster)
        let name = "pt_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let direct = try PostgresDatabases.create(name, cluster: cluster)
        defer { try? PostgresDatabases.drop(name, cluster: cluster) }
        var components = try #require(URLComponents(string: ProcessInfo.processInfo.environment["PUSHTRACE_TEST_PGBOUNCER"] ?? ""))
        components.path = "/" + name
        components.query = "pool_mode=transaction"
        let pooled = try #require(components.string)
        let work = try WorkFolder()
        #expect(try work.run("simulate", "--out", "bundles", "--notifications", "80", "--seed", "9").status == 0)
        let token = try work.run(["token", "create", "--db", pooled, "--scope", "admin"], environment: [:])
        #expect(token.status == 0, "\(token.stderr)")
        let bearer = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let servers = [
            try await ServerProcess(arguments: ["--db", pooled, "--alert-interval", "1"], in: work.url),
            try await ServerProcess(arguments: ["--db", pooled, "--alert-interval", "1"], in: work.url),
        ]
        let folder = work.url.appendingPathComponent("bundles")
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.contains(".ndjson") }.sorted()
        for (index, file) in files.enumerated() {
            let answer = try await Self.upload(folder.appendingPathComponent(file), to: servers[index % 2].url, token: bearer)
            #expect(answer.status == 200, "\(file)")
        }
        let stored = try work.run(["sql", "--db", direct, "--format", "csv", "SELECT count(*) FROM bundle"], environment: [:])
        #expect(stored.stdout.split(separator: "\n").last.map(String.init) == "\(files.count)")
        let scenarios =
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("scenarios.json"))) as? [String: Any]
        let examples = (scenarios?["examples"] as? [String: [[String: Any]]] ?? [:]).values.joined().prefix(8)
        #expect(!examples.isEmpty)
        for example in examples {
            let id = try #require(example["notification_id"] as? String), app = try #require(example["app_id"] as? String)
            let why = ["why", id, "--app", app, "--format", "json"]
            let first = try work.run(why + ["--server", servers[0].url], environment: ["PUSHTRACE_TOKEN": bearer])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(try work.run(why + ["--server", servers[1].url], environment: ["PUSHTRACE_TOKEN": bearer]).stdout == first.stdout)
            let local = try work.run(why + ["--db", pooled], environment: [:])
            #expect(local.status == 0, "\(local.stderr)")
        }

        // The alert monitor's lease names one server's process; killed, the other holds it within three evaluations.
        func holder() throws -> String {
            let answer = try work.run(
                ["sql", "--db", direct, "--format", "csv", "SELECT holder FROM lease WHERE task = 'alert-monitor' AND expires_at > now()"],
                environment: [:])
            return answer.stdout.split(separator: "\n").dropFirst().first.map(String.init) ?? ""
        }
        func leader(among candidates: [ServerProcess]) async throws -> ServerProcess? {
            for _ in 0..<100 {
                let current = try holder()
                if let found = candidates.first(where: { current.contains(":\($0.process.processIdentifier):") }) { return found }
                try await Task.sleep(for: .milliseconds(100))
            }
            return nil
        }
        let first = try #require(try await leader(among: servers))
        let other = try #require(servers.first { $0 !== first })
        try await first.kill()
        let started = Date()
        let next = try await leader(among: [other])
        let lease = try holder()
        #expect(next === other, "the lease after the leader died: \(lease)")
        #expect(Date().timeIntervalSince(started) < 6)
        #expect(other.stop() == 0)
        // A server that stops gives its leases back.
        let left = try work.run(["sql", "--db", direct, "--format", "csv", "SELECT count(*) FROM lease"], environment: [:])
        #expect(left.stdout.split(separator: "\n").last == "0")
    }

    struct Answer: Sendable {
        var status: Int
        var duplicate: Bool
        var accepted: Int
    }

    /// Uploads a bundle file as the app would (gzip files with `Content-Encoding: gzip`), its modification time as
    /// the time it arrived.
    /// Signs in to a server's console; the session cookie's `name=value`.
    static func signIn(_ server: String, token: String) async throws -> String {
        final class NoRedirect: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
            func urlSession(
                _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
            ) { completionHandler(nil) }
        }
        var request = URLRequest(url: URL(string: "\(server)/ui/login")!)
        request.httpMethod = "POST"
        request.httpShouldHandleCookies = false
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("token=\(token)".utf8)
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirect(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let (_, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 303)
        let setCookie = try #require(http.value(forHTTPHeaderField: "Set-Cookie"))
        return String(setCookie.split(separator: ";")[0])
    }

    static func upload(_ file: URL, to server: String, token: String) async throws -> Answer {
        let body = try Data(contentsOf: file)
        var request = URLRequest(url: URL(string: server + "/v1/bundles")!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if file.pathExtension == "gz" { request.setValue("gzip", forHTTPHeaderField: "Content-Encoding") }
        let modified = try FileManager.default.attributesOfItem(atPath: file.path)[.modificationDate] as? Date ?? Date()
        request.setValue(String(Int64(modified.timeIntervalSince1970 * 1000)), forHTTPHeaderField: "Pushtrace-Received-At")
        let (data, response) = try await URLSession.shared.upload(for: request, from: body)
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        return Answer(
            status: (response as? HTTPURLResponse)?.statusCode ?? 0, duplicate: object?["duplicate"] as? Bool ?? false,
            accepted: object?["accepted"] as? Int ?? -1)
    }
}
