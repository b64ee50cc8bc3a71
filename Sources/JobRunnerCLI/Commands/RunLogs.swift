import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore

/// `jobrunner logs` without a job: every job's output in one stream, each line prefixed by its
/// job, as `docker compose logs` does; with `-f`, followed until the run is final.
struct RunLogs {
    let reader: ReadModel
    let runID: String

    /// Where each log was read up to, and the piece of a line not yet printed.
    private struct Position {
        var offset: UInt64 = 0
        var partial = Data()
    }

    func print(follow: Bool) async throws {
        var positions: [String: Position] = [:]
        while true {
            guard let snapshot = try? await reader.snapshot(runID: runID) else {
                printError("jobrunner: run \(runID) is gone")
                throw ExitCode(ExitStatus.failed)
            }
            let width = snapshot.run.jobIDs.map(\.count).max() ?? 0
            // Every attempt when following (none is missed between two looks); the latest of
            // each job otherwise.
            for id in snapshot.run.jobIDs {
                let attempts = snapshot.attempts[id] ?? []
                for attempt in follow ? attempts : Array(attempts.suffix(1)) {
                    let path = reader.logPath(of: attempt, runID: runID)
                    let key = "\(id)#\(attempt.number)"
                    var position = positions[key] ?? Position()
                    let prefix = id.padding(toLength: width, withPad: " ", startingAt: 0) + " | "
                    try emit(
                        path: path, prefix: prefix, position: &position,
                        flush: attempt.outcome != nil || !follow)
                    positions[key] = position
                }
            }
            guard follow else { return }
            if snapshot.run.state.isFinal { return }
            if await reader.runnerPID() == nil {
                printError(
                    "jobrunner: no runner works on run \(runID) (\(snapshot.run.state.rawValue)); the next `jobrunner run` resumes it"
                )
                throw ExitCode(ExitStatus.failed)
            }
            try await Task.sleep(for: LogsCommand.pollInterval)
        }
    }

    /// Prints the complete lines added to a log since `position`, prefixed; `flush` prints a
    /// last line without its line break too.
    /// - Throws: ``OutputClosed`` when standard output cannot be written.
    private func emit(path: String, prefix: String, position: inout Position, flush: Bool)
        throws(OutputClosed)
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        // A piece at a time, each line copied once: written as the pieces come, so a reader
        // that goes away (`| head`) stops the reading too.
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var pending = [UInt8](position.partial)
        var text: [UInt8] = []
        let prefixBytes = Array(prefix.utf8)
        func line(_ bytes: ArraySlice<UInt8>) {
            text.append(contentsOf: prefixBytes)
            text.append(contentsOf: String(decoding: bytes, as: UTF8.self).utf8)
            text.append(0x0A)
        }
        while true {
            let count = chunk.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress, $0.count, off_t(position.offset))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            position.offset += UInt64(count)
            pending.append(contentsOf: chunk[0..<count])
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                line(pending[start..<newline])
                start = newline + 1
            }
            pending.removeSubrange(..<start)
            if text.count >= 64 << 10 {
                try OutputClosed.write(text)
                text.removeAll(keepingCapacity: true)
            }
        }
        if flush && !pending.isEmpty {
            line(pending[...])
            pending = []
        }
        position.partial = Data(pending)
        if !text.isEmpty { try OutputClosed.write(text) }
    }
}
