import Foundation
import JobRunnerCore
import JobRunnerLMDB
import Testing

/// `status --json` byte for byte, on a state written directly with every kind of row: final
/// jobs of each state, waiting ones, a running one, awkward text in ids, reasons and outputs,
/// dates with milliseconds to round and before 1970. The expected text is what the binary
/// printed before `status --json` was made faster (issue 13); the output must not change.
@Suite(.serialized) struct StatusJSONTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000.1234)

    static func at(_ seconds: Double) -> Date { Date(timeIntervalSince1970: 1_800_000_000 + seconds) }

    static let awkwardID = "té\"st\\x"

    static var records: [JobRecord] {
        var build = JobRecord(
            jobID: "build", pipeline: "p", state: .succeeded, attempts: 1, exitCode: 0,
            firstStartedAt: at(1.0005), startedAt: at(1.0005), finishedAt: at(2.9996))
        build.allowFailure = false
        let awkward = JobRecord(
            jobID: awkwardID, pipeline: "q", maxAttempts: 3, state: .succeeded, attempts: 2, exitCode: 0,
            firstStartedAt: Date(timeIntervalSince1970: -1.5), startedAt: Date(timeIntervalSince1970: -1.5),
            finishedAt: at(4.25))
        let fail = JobRecord(
            jobID: "fail", pipeline: "p", maxAttempts: 3, state: .failed, reason: .ended(.exit(3)),
            attempts: 3,
            exitCode: 3, firstStartedAt: at(5), startedAt: at(6), finishedAt: at(7))
        var allowed = JobRecord(
            jobID: "allowed", pipeline: "p", state: .failed,
            reason: .ended(.message("boom \u{1} \\ \"x\" é 🚀")), attempts: 1, exitCode: 1,
            startedAt: at(8), finishedAt: at(9))
        allowed.allowFailure = true
        let skip = JobRecord(
            jobID: "skip", pipeline: "p", state: .skipped, reason: .ended(.message("nothing to do")),
            attempts: 1,
            startedAt: at(10), finishedAt: at(10.5))
        let blocked = JobRecord(
            jobID: "blocked", pipeline: "p", needs: ["fail"], state: .blocked,
            reason: .ended(.blockedBy("fail")),
            finishedAt: at(7))
        let cancel = JobRecord(
            jobID: "cancel", pipeline: "p", state: .cancelled, reason: .ended(.cancelledByOperator),
            finishedAt: at(11))
        let wait = JobRecord(jobID: "wait", pipeline: "p", needs: ["retry"], state: .pending)
        let retry = JobRecord(
            jobID: "retry", pipeline: "q", maxAttempts: 4, state: .waiting, reason: .waiting(.backoff),
            attempts: 1,
            exitCode: 2, firstStartedAt: at(12), startedAt: at(12), finishedAt: at(13), nextAttemptAt: at(73))
        let running = JobRecord(
            jobID: "run", pipeline: "p", state: .running, attempts: 1, firstStartedAt: at(14),
            startedAt: at(14))
        var constrained = JobRecord(
            jobID: "con", pipeline: "p", state: .waiting, reason: .waiting(.constraint("disk")))
        constrained.waitingSince = at(15)
        return [build, awkward, fail, allowed, skip, blocked, cancel, wait, retry, running, constrained]
    }

    /// A state directory holding one stopped run of `records`, with outputs and a suspension.
    static func writeState(_ path: String) async throws {
        let store = try LMDBQueueStore(directory: path + "/db", mapSize: 64 << 20)
        defer { store.close() }
        let run = RunRecord(
            id: "R", state: .stopped, startedAt: start, finishedAt: at(20), jobIDs: records.map(\.jobID),
            runnerPID: 1, pipelineLimits: ["p": 2, "q": 0])
        var changes: [StoreChange] = [.putRun(run), .setCurrentRun("R")]
        changes += records.map { .putJob(runID: "R", $0) }
        changes.append(
            .putOutputs(
                runID: "R", jobID: "build", occurrence: "", ["path": "/a \"b\"\n", "z": "1", "a": "é"]))
        changes.append(.putOutputs(runID: "R", jobID: awkwardID, occurrence: "", ["k": "v\\"]))
        changes.append(.putPipeline(PipelineRecord(name: "q", suspended: 1)))
        try await store.commit(changes, under: try await store.claim(owner: "test"))
    }

    static let expected = #"""
        {"run":{"id":"R","state":"stopped","startedAt":"2027-01-15T08:00:00.123Z","finishedAt":"2027-01-15T08:00:20.000Z"}
        ,"jobs":[
        {"id":"build","pipeline":"p","state":"succeeded","reason":null,"attempts":1,"exitCode":0,"startedAt":"2027-01-15T08:00:01.000Z","finishedAt":"2027-01-15T08:00:02.999Z","nextAttemptAt":null,"outputs":{"a":"é","path":"/a \"b\"\u000a","z":"1"}}
        ,{"id":"té\"st\\x","pipeline":"q","state":"succeeded","reason":null,"attempts":2,"exitCode":0,"startedAt":"1969-12-31T23:59:58.500Z","finishedAt":"2027-01-15T08:00:04.250Z","nextAttemptAt":null,"outputs":{"k":"v\\"}}
        ,{"id":"fail","pipeline":"p","state":"failed","reason":"exit:3","attempts":3,"exitCode":3,"startedAt":"2027-01-15T08:00:06.000Z","finishedAt":"2027-01-15T08:00:07.000Z","nextAttemptAt":null,"outputs":{}}
        ,{"id":"allowed","pipeline":"p","state":"failed","reason":"boom \u0001 \\ \"x\" é 🚀","attempts":1,"exitCode":1,"startedAt":"2027-01-15T08:00:08.000Z","finishedAt":"2027-01-15T08:00:09.000Z","nextAttemptAt":null,"outputs":{}}
        ,{"id":"skip","pipeline":"p","state":"skipped","reason":"nothing to do","attempts":1,"exitCode":null,"startedAt":"2027-01-15T08:00:10.000Z","finishedAt":"2027-01-15T08:00:10.500Z","nextAttemptAt":null,"outputs":{}}
        ,{"id":"blocked","pipeline":"p","state":"blocked","reason":"needs:fail","attempts":0,"exitCode":null,"startedAt":null,"finishedAt":"2027-01-15T08:00:07.000Z","nextAttemptAt":null,"outputs":{}}
        ,{"id":"cancel","pipeline":"p","state":"cancelled","reason":"cancelled by operator","attempts":0,"exitCode":null,"startedAt":null,"finishedAt":"2027-01-15T08:00:11.000Z","nextAttemptAt":null,"outputs":{}}
        ,{"id":"wait","pipeline":"p","state":"waiting","reason":"needs:retry","attempts":0,"exitCode":null,"startedAt":null,"finishedAt":null,"nextAttemptAt":null,"outputs":{}}
        ,{"id":"retry","pipeline":"q","state":"waiting","reason":"backoff","attempts":1,"exitCode":2,"startedAt":"2027-01-15T08:00:12.000Z","finishedAt":"2027-01-15T08:00:13.000Z","nextAttemptAt":"2027-01-15T08:01:13.000Z","outputs":{}}
        ,{"id":"run","pipeline":"p","state":"running","reason":null,"attempts":1,"exitCode":null,"startedAt":"2027-01-15T08:00:14.000Z","finishedAt":null,"nextAttemptAt":null,"outputs":{}}
        ,{"id":"con","pipeline":"p","state":"waiting","reason":"constraint:disk","attempts":0,"exitCode":null,"startedAt":null,"finishedAt":null,"nextAttemptAt":null,"outputs":{}}]
        ,"pipelines":[{"name":"p","maxConcurrent":2,"suspended":0,"running":1},{"name":"q","maxConcurrent":0,"suspended":1,"running":0}]
        ,"periodic":[]
        ,"pendingRequests":[]
        ,"runnerPID":null}

        """#

    @Test func statusJSONIsByteForByteAsDocumented() async throws {
        let workspace = try Workspace(files: [:])
        try await Self.writeState(workspace.state)
        let status = try await workspace.run("status", "--json")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout == Self.expected, "\(status.stdout)")
        // And it is JSON, one job per line.
        let json = try statusJSON(status.stdout)
        #expect((json["jobs"] as? [[String: Any]])?.count == Self.records.count)
    }
}
