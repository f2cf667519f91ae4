import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `pushtrace why --follow`, end to end: started on a notification with only `push.sent` stored, it prints the
/// records of an upload made while it runs, and exits 0 once the cause is final; from a server's live stream and
/// from the store itself.
@Suite struct WhyFollowCLITests {
    static let app = "net.rorklab.dailypick"

    static func sentLines(_ id: String, at ts: Int64) -> [String] {
        [
            #"{"type":"manifest","schema":1,"bundle_id":"\#(UUID().uuidString)","app_id":"\#(app)","device_id":"server"}"#,
            #"{"type":"event","ts":\#(ts),"process":"server","event":"push.sent","notification_id":"\#(id)","category":"DAILY_PICK","mutable_content":true,"has_alert":true,"payload_bytes":700,"device_id":"d-1"}"#,
        ]
    }

    static func deviceLines(_ id: String, at ts: Int64) -> [String] {
        [
            #"{"type":"manifest","schema":1,"bundle_id":"\#(UUID().uuidString)","app_id":"\#(app)","device_id":"d-1","uploaded_at":\#(ts + 31_000)}"#,
            #"{"type":"event","ts":\#(ts + 300),"process":"service","event":"service.received","notification_id":"\#(id)","category":"DAILY_PICK"}"#,
            #"{"type":"event","ts":\#(ts + 30_300),"process":"service","event":"service.expired","notification_id":"\#(id)","elapsed_ms":30000}"#,
        ]
    }

    /// `pushtrace why --follow` running in the background, its output going to a file that can be read while it
    /// runs: the upload is made once the follower has shown the answer before it, however slow a loaded machine is
    /// to start it.
    final class Follower: @unchecked Sendable {
        let process = Process()
        let out: URL
        let err: URL

        init(_ arguments: [String], environment: [String: String] = [:], in work: WorkFolder) throws {
            out = work.url.appendingPathComponent("follow-\(UUID().uuidString).out")
            err = out.appendingPathExtension("err")
            FileManager.default.createFile(atPath: out.path, contents: nil)
            FileManager.default.createFile(atPath: err.path, contents: nil)
            process.executableURL = Executable.url
            process.arguments = ["why", "--follow"] + arguments
            process.currentDirectoryURL = work.url
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = try FileHandle(forWritingTo: err)
            try process.run()
        }

        /// Waits (up to a minute) until the output holds `text`.
        func waitFor(_ text: String) async throws {
            for _ in 0..<600 {
                if (try? String(contentsOf: out, encoding: .utf8))?.contains(text) == true { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the follower never printed \(text)")
        }

        /// Waits for the follower to end (up to a minute; killed past it) and returns what it printed.
        func finish() async throws -> Executable.Output {
            for _ in 0..<600 where process.isRunning { try await Task.sleep(for: .milliseconds(100)) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            return Executable.Output(
                status: process.terminationStatus, stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
        }
    }

    static let waiting = "cause: awaiting_device_logs (may still change)"

    static func expectFollowed(_ output: Executable.Output, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(output.status == 0, "\(output.stderr)", sourceLocation: sourceLocation)
        let text = output.stdout
        let waiting = text.range(of: "cause: awaiting_device_logs (may still change)")
        let expired = text.range(of: "service.expired")
        let final = text.range(of: "cause: service_timeout\n")
        #expect(waiting != nil && expired != nil && final != nil, "\(text)", sourceLocation: sourceLocation)
        if let waiting, let expired, let final {
            #expect(
                waiting.upperBound < expired.lowerBound && expired.upperBound < final.lowerBound, "\(text)", sourceLocation: sourceLocation)
        }
        #expect(text.contains("push.sent"), sourceLocation: sourceLocation)
    }

    @Test func followsAServersLiveStreamUntilTheCauseIsFinal() async throws {
        let work = try WorkFolder()
        let token = try work.run(["token", "create", "--scope", "admin"], environment: [:]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try await ServerProcess(arguments: ["--db", "pushtrace.sqlite"], in: work.url)
        let id = "follow-\(UUID().uuidString.lowercased())"
        let t0 = Int64(Date().timeIntervalSince1970 * 1000) - 40_000
        try await Self.post(Self.sentLines(id, at: t0), to: "\(server.url)/v1/events", token: token)

        let follower = try Follower([id, "--server", server.url], environment: ["PUSHTRACE_TOKEN": token], in: work)
        try await follower.waitFor(Self.waiting)
        try await Self.post(Self.deviceLines(id, at: t0), to: "\(server.url)/v1/bundles", token: token)
        Self.expectFollowed(try await follower.finish())

        let json = try await work.runDetached(
            ["why", id, "--follow", "--server", server.url, "--format", "json"], environment: ["PUSHTRACE_TOKEN": token])
        #expect(json.status == 0)
        let events = json.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(events.map { $0["event"] as? String } == ["record", "record", "record", "cause"])
        #expect((events.last?["data"] as? [String: Any])?["final"] as? Bool == true)

        let unknown = try await work.runDetached(
            ["why", "never-sent", "--follow", "--server", server.url], environment: ["PUSHTRACE_TOKEN": token])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("404"))
        #expect(server.stop() == 0)
    }

    @Test func followsTheStoreWithDB() async throws {
        let work = try WorkFolder()
        let id = "follow-db-1"
        let t0 = Int64(Date().timeIntervalSince1970 * 1000) - 40_000
        try work.write("sent.ndjson", Self.sentLines(id, at: t0))
        try work.write("device.ndjson", Self.deviceLines(id, at: t0))
        #expect(try work.run("ingest", "sent.ndjson").status == 0)
        let follower = try Follower([id], in: work)
        try await follower.waitFor(Self.waiting)
        #expect(try work.run("ingest", "device.ndjson").status == 0)
        Self.expectFollowed(try await follower.finish())
        let unknown = try work.run("why", "never-sent", "--follow")
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("unknown_notification"))
    }

    static func post(_ lines: [String], to url: String, token: String) async throws {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/x-ndjson", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(lines.map { $0 + "\n" }.joined().utf8)
        let (body, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: body, as: UTF8.self))")
    }
}
