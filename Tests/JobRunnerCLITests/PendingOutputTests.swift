import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerCLI

/// Progress lines and events wait for the runner's `flush()` (once per batch of its messages)
/// and then go out in one write, in the order they were recorded.
@Suite struct PendingOutputTests {
    @Test func plainProgressWritesItsLinesInOrderOnFlush() throws {
        let pipe = Pipe()
        let reading = pipe.fileHandleForReading.fileDescriptor
        _ = fcntl(reading, F_SETFL, fcntl(reading, F_GETFL) | O_NONBLOCK)
        let progress = PlainProgress(
            fd: pipe.fileHandleForWriting.fileDescriptor, logs: LogTail(directory: "/nonexistent"))
        progress.record(Self.event(.started, "a"))
        progress.record(Self.event(.succeeded, "a"))
        progress.record(Self.event(.started, "b"))
        var buffer = [UInt8](repeating: 0, count: 4096)
        #expect(read(reading, &buffer, buffer.count) == -1 && errno == EAGAIN, "nothing before the flush")
        progress.flush()
        let count = read(reading, &buffer, buffer.count)
        let lines = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3)
        #expect(
            lines.map { $0.split(separator: " ", maxSplits: 1).last.map(String.init) ?? "" } == [
                "started     a (attempt 1)", "succeeded   a (attempt 1)", "started     b (attempt 1)",
            ])
    }

    @Test func theEventsFileGetsItsLinesInOrderOnFlush() throws {
        let path = NSTemporaryDirectory() + "events-\(UUID().uuidString).jsonl"
        defer { unlink(path) }
        let writer = try EventsWriter(path: path)
        let events = [Self.event(.started, "a"), Self.event(.succeeded, "a"), Self.event(.started, "b")]
        for event in events { writer.record(event) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "", "nothing before the flush")
        writer.flush()
        #expect(
            try String(contentsOfFile: path, encoding: .utf8)
                == events.map { EventsWriter.json($0) + "\n" }.joined())
    }

    @Test func aLargeBacklogIsWrittenBeforeTheFlush() throws {
        let path = NSTemporaryDirectory() + "events-\(UUID().uuidString).jsonl"
        defer { unlink(path) }
        let writer = try EventsWriter(path: path)
        let event = Self.event(.queued, "a")
        let count = PendingOutput.limit / EventsWriter.json(event).utf8.count + 1
        for _ in 0..<count { writer.record(event) }
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(!written.isEmpty && written.hasSuffix("\n"), "whole lines, written once over the limit")
    }

    static func event(_ kind: RunEvent.Kind, _ job: String) -> RunEvent {
        RunEvent(time: Date(timeIntervalSince1970: 0), run: "r", job: job, attempt: 1, kind: kind)
    }
}
