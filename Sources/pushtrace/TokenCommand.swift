import ArgumentParser
import Foundation
import PushTraceRecords
import PushTraceStore

struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Create, list and revoke the server's access tokens.",
        discussion: """
            Scopes: 'ingest' uploads bundles and events for one app and reads nothing; 'read' reads one app; \
            'metrics' reads GET /metrics with its series by app (Prometheus's token; without one, /metrics shows \
            only the server's own series); 'admin' reads every app (and may upload for any). A token is printed once, at creation: only a hash \
            of it is stored, so a lost token is revoked and replaced, never recovered.

            Examples:
              pushtrace token create --app net.rorklab.dailypick --scope ingest --label "iOS app 2.3"
              pushtrace token create --scope admin --label grafana
              pushtrace token create --scope metrics --label prometheus
              pushtrace token list
              pushtrace token revoke 3f9a1c0e7b2d
            """,
        subcommands: [Create.self, List.self, Revoke.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token and print it (once).")

        @OptionGroup var database: DatabaseOptions
        @Option(help: ArgumentHelp("The app the token is for (required for ingest and read).", valueName: "app-id"))
        var app: String?
        @Option(
            help: ArgumentHelp(
                "ingest (an app's uploads), read (one app's answers), metrics (/metrics by app, for Prometheus) or admin (everything).",
                valueName: "scope"))
        var scope: String
        @Option(help: ArgumentHelp("A note on who uses it.", valueName: "text"))
        var label: String?

        func validate() throws {
            guard let parsed = TokenScope(rawValue: scope) else {
                throw ValidationError("--scope \(scope) is not a scope; use ingest, read, metrics or admin")
            }
            let everyApp: Set<TokenScope> = [.admin, .metrics]
            if !everyApp.contains(parsed), app?.isEmpty ?? true {
                throw ValidationError("an \(parsed.rawValue) token is for one app: say which with --app")
            }
            if everyApp.contains(parsed), app != nil {
                throw ValidationError("a\(parsed == .admin ? "n" : "") \(parsed.rawValue) token covers every app: leave out --app")
            }
            if let app, !WireBounds.isAppID(app) {
                throw ValidationError(
                    "--app \(TerminalText.escaped(app)) is not a bundle identifier: 1 to "
                        + "\(WireBounds.maxAppIDBytes) bytes of letters, digits, '.', '-' and '_'")
            }
            if let label, let scalar = label.unicodeScalars.first(where: TerminalText.isHidden) {
                throw ValidationError("--label holds the control character \(TerminalText.escape(scalar))")
            }
        }

        func run() async throws {
            let store = try database.openStore()
            defer { database.close(store) }
            let (info, text) = try await store.createToken(
                appID: app, scope: TokenScope(rawValue: scope)!, label: label,
                now: Int64(Date().timeIntervalSince1970 * 1000))
            print(text.text)
            printError(
                "token \(info.id) (\(scope)\(info.appID.map { " for \($0)" } ?? ", every app")) "
                    + "created. It is shown only now: keep it in a secret store.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (never their secrets).")

        @OptionGroup var database: DatabaseOptions
        @Option(help: "text (a table) or json.") var format: OutputFormat = .text

        func run() async throws {
            let tokens = try await database.withExistingStore { try await $0.tokens() }
            if format == .json {
                try printJSON(tokens)
                return
            }
            var table = TextTable(["ID", "SCOPE", "APP", "LABEL", "CREATED (UTC)", "REVOKED (UTC)"])
            for token in tokens {
                table.add([
                    token.id, token.scope?.rawValue ?? "unknown (can do nothing)", token.appID ?? "(every app)", token.label ?? "-",
                    Instant.format(token.createdAt), token.revokedAt.map { Instant.format($0) } ?? "-",
                ])
            }
            print(table.rendered)
            print("\(tokens.count) token\(tokens.count == 1 ? "" : "s")")
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token: requests with it fail from now on.")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: ArgumentHelp("The token's ID, as `token list` shows it (or the whole token).", valueName: "id"))
        var id: String

        func run() async throws {
            let tokenID = TokenText(id)?.id ?? id
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            guard try await database.withExistingStore({ try await $0.revokeToken(id: tokenID, now: now) })
            else {
                throw UsageError("no token with ID \(tokenID) (see pushtrace token list)")
            }
            print("token \(TerminalText.escaped(tokenID)) revoked")
        }
    }
}
