import ArgumentParser
import Foundation
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
                    emit(
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
    private func emit(path: String, prefix: String, position: inout Position, flush: Bool) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return }
        defer { try? handle.close() }
        try? handle.seek(toOffset: position.offset)
        let data = handle.readDataToEndOfFile()
        position.offset += UInt64(data.count)
        var pending = position.partial + data
        var text = ""
        while let newline = pending.firstIndex(of: 0x0A) {
            text += prefix + String(decoding: pending[pending.startIndex..<newline], as: UTF8.self) + "\n"
            pending = Data(pending[(newline + 1)...])
        }
        if flush && !pending.isEmpty {
            text += prefix + String(decoding: pending, as: UTF8.self) + "\n"
            pending = Data()
        }
        position.partial = pending
        if !text.isEmpty { FileHandle.standardOutput.write(Data(text.utf8)) }
    }
}
