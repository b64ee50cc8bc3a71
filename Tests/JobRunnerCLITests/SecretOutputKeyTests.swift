import Foundation
import Testing

/// A secret in an output's key is masked as one in its value (SPEC 3.1): in the store, in
/// `status`, in the names of the variables a needing job gets, and in events.
@Suite struct SecretOutputKeyTests {
    @Test func aSecretInAnOutputKeyIsMaskedEverywhere() async throws {
        let workspace = try Workspace(files: [
            "keys.yaml": """
            secrets: [TOK, TOK2]
            jobs:
              k:
                run: |
                  echo "$TOK=1" >> "$JOBRUNNER_OUTPUT"
                  echo "$TOK2=2" >> "$JOBRUNNER_OUTPUT"
                  echo "x-$TOK=3" >> "$JOBRUNNER_OUTPUT"
                  echo "plain=$TOK" >> "$JOBRUNNER_OUTPUT"
              use:
                needs: [k]
                run: env | grep '^JOBRUNNER_OUT_' | LC_ALL=C sort
            """
        ])
        let run = try await workspace.run(
            ["run", "jobs", "--progress", "none", "--events", "events.jsonl"],
            environment: ["TOK": "abcdefghijkl", "TOK2": "mnopqrstuvwx"])
        #expect(run.status == 0, "\(run.stderr)")
        let outputs = try await workspace.statusJobs()["k"]?["outputs"] as? [String: String]
        // `abcdefghijkl` sorts before `mnopqrstuvwx`: its value is the one kept under `***`.
        #expect(outputs == ["***": "1", "x-***": "3", "plain": "***"])
        let log = try await workspace.run("logs", "use").stdout
        #expect(
            log == "JOBRUNNER_OUT_K_PLAIN=***\nJOBRUNNER_OUT_K_X____=3\nJOBRUNNER_OUT_K____=1\n", "\(log)")
        let events = workspace.read("events.jsonl")
        for (name, text) in [
            ("status", try await workspace.run("status", "--json").stdout), ("events", events),
            ("log", log),
        ] {
            #expect(!text.lowercased().contains("abcdefghijkl"), "\(name): \(text)")
            #expect(!text.lowercased().contains("mnopqrstuvwx"), "\(name): \(text)")
        }
        let files = FileManager.default.enumerator(atPath: workspace.state)?.allObjects as? [String] ?? []
        #expect(files.contains("db/data.mdb"))
        for file in files {
            guard let data = FileManager.default.contents(atPath: workspace.state + "/" + file) else {
                continue
            }
            #expect(data.range(of: Data("abcdefghijkl".utf8)) == nil, "\(file) holds the secret")
            #expect(data.range(of: Data("mnopqrstuvwx".utf8)) == nil, "\(file) holds the secret")
        }
    }
}
