import Foundation
import Testing

@testable import JobRunnerCore

/// A commit's stored events (``CommittedEvent/Batch``) are read back where they lie, member for
/// member as `JSONDecoder` reads them; a batch of another shape still reads, by `JSONDecoder`.
@Suite struct CommittedEventBatchTests {
    static let date = Date(timeIntervalSinceReferenceDate: 812_345_678.25)

    static let changes: [StoreChange] = [
        .setCurrentRun("20261128T070000.000Z-ab12"),
        .putPipeline(PipelineRecord(name: "ci", suspended: 2)),
        .putRequest(
            runID: "r1",
            OperatorRequest(id: 1_764_313_200_123_456, kind: .retry, jobID: "build", requestedAt: date)),
        .deleteRequest(runID: "r1", id: 42),
        .deleteRun("r0"),
        .recordEvents([
            RunEvent(
                time: date, run: "r1", job: "test \"quoted\" ✓", attempt: 3, kind: .failed,
                reason: "exit 2\nsecond line", exitCode: -2, delay: .milliseconds(1_500), key: "k",
                value: "v",
                state: "failed", pipeline: "ci", occurrence: date.addingTimeInterval(-60), hook: "ops"),
            RunEvent(time: date, run: "r1", kind: .runFinished),
        ]),
        .recordAnswers([
            OperatorAnswer(
                request: OperatorRequest(id: 7, kind: .cancel, jobID: "a", requestedAt: date, runID: "r1"),
                result: .applied("a cancelled")),
            OperatorAnswer(
                request: OperatorRequest(id: 8, kind: .skip, jobID: "b", requestedAt: date),
                result: .terminating(jobID: "b")),
            OperatorAnswer(
                request: OperatorRequest(id: 9, kind: .retry, jobID: "c", requestedAt: date, runID: "r1"),
                result: .refused("c is running")),
        ]),
    ]

    @Test func aBatchIsReadWhereItLiesAsJSONDecoderReadsIt() throws {
        var batch = CommittedEvent.Batch(committedAt: Self.date)
        for change in Self.changes { batch.add(change) }
        let bytes = batch.finish()
        let inPlace = try #require(
            bytes.withUnsafeBytes(CommittedEvent.StoredBatch.read), "read where it lies")
        let decoded = try JSONDecoder().decode(CommittedEvent.StoredBatch.self, from: Data(bytes))
        #expect(inPlace.at == decoded.at)
        #expect(try inPlace.events.map { try $0.change() } == decoded.events.map { try $0.change() })

        let expected = Self.changes.flatMap(CommittedEvent.changes(of:))
        let events = try CommittedEvent.events(inBatch: bytes, last: 100)
        #expect(events.map(\.change) == expected)
        #expect(events.map(\.sequence) == Array(UInt64(101 - expected.count)...100))
        #expect(events.allSatisfy { $0.committedAt == Self.date })
    }

    @Test func aBatchOfAnotherShapeIsReadByJSONDecoder() throws {
        // A member this version does not write (a later version's): not read in place, and
        // JSONDecoder's answer stands.
        let bytes = Array(#"{"at": 0, "events": [{"t": "current", "run": "r", "later": 1}]}"#.utf8)
        #expect(bytes.withUnsafeBytes(CommittedEvent.StoredBatch.read) == nil)
        let events = try CommittedEvent.events(inBatch: bytes, last: 7)
        #expect(
            events == [
                CommittedEvent(
                    sequence: 7, committedAt: Date(timeIntervalSinceReferenceDate: 0),
                    change: .currentRun(id: "r"))
            ])
        // Not a batch at all: an error, either way.
        #expect(throws: (any Error).self) {
            try CommittedEvent.events(
                inBatch: Array(#"{"at": 0, "events": [{"t": "nonsense"}]}"#.utf8), last: 1)
        }
        #expect(throws: (any Error).self) { try CommittedEvent.events(inBatch: Array("{".utf8), last: 1) }
    }
}
