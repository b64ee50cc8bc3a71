import Foundation
import Testing

/// `GET /events` carries, for each event of SPEC 5.10, the document `run --events` wrote for it,
/// byte for byte: what a failed attempt's event says (`exitCode`, `reason`), retries, outputs,
/// the run's end and its `notify:` hooks, read back by `jobrunner web` from the store.
@Suite struct EventDocumentTests {
    static let jobs = """
        version: 1
        pipelines:
          main: { maxConcurrent: 2 }
        defaults: { pipeline: main }
        notify:
          tell:
            on: [failure]
            run: echo told
        jobs:
          hello:
            run: echo "greeting=hi" >> "$JOBRUNNER_OUTPUT"
          broken:
            retry: { attempts: 2, delay: 0s }
            run: exit 3
          after:
            needs: [broken]
            run: echo after
        """

    /// The SPEC 5.10 names a frame may carry.
    static let names: Set<String> = [
        "queued", "waiting", "started", "succeeded", "failed", "retrying", "skipped", "blocked",
        "cancelled", "interrupted", "disabled", "suspended", "resumed", "output", "run-finished",
        "notify-started", "notify-succeeded", "notify-failed",
    ]

    /// The `data:` of each frame whose `event:` is one of SPEC 5.10's, in order.
    static func documents(in stream: String) -> [String] {
        stream.components(separatedBy: "\n\n").compactMap { frame in
            let lines = frame.split(separator: "\n").map(String.init)
            guard let name = lines.first(where: { $0.hasPrefix("event: ") })?.dropFirst(7),
                names.contains(String(name)),
                let data = lines.first(where: { $0.hasPrefix("data: ") })
            else { return nil }
            return String(data.dropFirst(6))
        }
    }

    @Test func theStreamCarriesTheDocumentsRunEventsWrote() async throws {
        let place = try Place(files: ["main.yaml": Self.jobs])
        let file = place.root + "/events.jsonl"
        let ran = try await place.run(["run", place.jobs, "--progress", "none", "--events", file])
        #expect(ran.status == 1, "\(ran.stderr)")
        let written = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(
            String.init)
        // A new run's `queued` events come as one `jobs-opened` on the stream.
        let expected = written.filter { !$0.contains(#""event": "queued""#) }
        #expect(expected.contains { $0.contains(#""event": "failed""#) && $0.contains(#""exitCode": 3"#) })
        #expect(expected.contains { $0.contains(#""event": "notify-succeeded""#) })

        let server = try await place.web()
        defer { Task { await server.stop() } }
        // The stored events first, then what the suspension below commits: once that comes,
        // every stored one has.
        let reading = Task {
            try await readEvents(port: server.port, headers: ["Last-Event-ID": "0"]) {
                $0.contains("event: pipeline")
            }
        }
        let suspend = try await request(server.port, "POST", "/api/v1/pipelines/main/suspend")
        #expect(suspend.status == 200, "\(suspend.body)")
        let stream = try await reading.value
        #expect(Self.documents(in: stream) == expected, "\(stream)")
        // A finished run's end is said once, by the runner: a store change makes no `run-finished`.
        #expect(stream.components(separatedBy: "event: run-finished").count == 2, "\(stream)")
    }
}
