import Foundation
import Glibc
import JobRunnerCore
import JobRunnerLMDB
import Testing

/// The state directory's places and its runner lock under conditions a user or a race creates.
@Suite struct StateDirectoryTests {
    /// Many runners started at once: every one that loses must name the winner's pid, also when
    /// it loses before the winner has written it (issue 11: 16 of 40 losers did not).
    @Test func everyLosingRacerNamesTheHolder() async throws {
        for _ in 0..<10 {
            let root = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let state = StateDirectory(path: root)
            try state.prepare()
            let racers = 40
            let results = RaceResults()
            let start = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            for _ in 0..<racers {
                done.enter()
                Thread.detachNewThread {
                    start.wait()
                    do {
                        results.add(won: try state.lockForRunner())
                    } catch {
                        results.add(lost: "\(error)")
                    }
                    done.leave()
                }
            }
            for _ in 0..<racers { start.signal() }
            // Awaited, not waited for: a test blocked on the cooperative pool holds up the others.
            await withCheckedContinuation { continuation in
                done.notify(queue: .global()) { continuation.resume() }
            }
            let (winners, losers) = results.taken()
            // Each racer holds the lock until the end (flocks of one process's separate opens
            // exclude each other as those of separate processes do): one winner.
            #expect(winners == 1)
            #expect(losers.count == racers - 1)
            for message in losers {
                #expect(message.contains("in use by another jobrunner (pid \(getpid()))"), "\(message)")
            }
        }
    }

    @Test func aPIDLeftByADeadRunnerIsNotTakenForTheHoldersPID() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = StateDirectory(path: root)
        try state.prepare()
        try "999999\n".write(toFile: state.lockPath, atomically: false, encoding: .utf8)
        let lock = try state.lockForRunner()
        defer { withExtendedLifetime(lock) {} }
        #expect(state.lockHolder() == getpid())
        #expect(throws: StoreError.self) { try state.lockForRunner() }
        do {
            _ = try state.lockForRunner()
        } catch {
            #expect(error.message.contains("(pid \(getpid()))"))
        }
    }

    /// An operator command without a runner holds the operator lock, not the runner lock: it is
    /// not taken for a runner (a second command sent it SIGUSR1, which killed it), and a runner
    /// or another operator command that starts meanwhile waits for it.
    @Test func anOperatorCommandIsNotTakenForARunnerAndIsWaitedFor() async throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let state = StateDirectory(path: root)
        try state.prepare()
        var first: OperatorLock? = try state.lockForOperator()
        #expect(first?.runnerWorks == false)
        #expect(state.lockHolder() == nil, "an operator command is no runner")

        let waiting = DispatchSemaphore(value: 0)
        let runner = Task.detached { () -> DirectoryLock? in
            await onThread { try? state.lockForRunner(whileWaiting: { waiting.signal() }) }
        }
        await onThread { waiting.wait() }
        first = nil
        let runnerLock = try #require(await runner.value)
        #expect(state.lockHolder() == getpid())

        var third: OperatorLock? = try state.lockForOperator()
        #expect(third?.runnerWorks == true)
        #expect(third?.runnerPID == getpid())
        let fourth = Task.detached { () -> OperatorLock? in
            await onThread { try? state.lockForOperator(whileWaiting: { waiting.signal() }) }
        }
        await onThread { waiting.wait() }
        third = nil
        let fourthLock = try #require(await fourth.value)
        #expect(fourthLock.runnerPID == getpid())
        withExtendedLifetime((first, third, runnerLock, fourthLock)) {}
    }

    @Test func aFileWhereADirectoryBelongsIsSaidSo() throws {
        let root = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }

        let file = StateDirectory(path: root + "/file")
        _ = FileManager.default.createFile(atPath: file.path, contents: Data())
        #expect(file.hasDatabase, "a file is not 'no runs yet'")
        #expect(throws: StoreError.self) { try file.openStore() }
        expectUnusable(try file.openStore(), saying: "the state path \(file.path) is a file, not a directory")

        let database = StateDirectory(path: root + "/db-file")
        try FileManager.default.createDirectory(atPath: database.path, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: database.databasePath, contents: Data())
        #expect(database.hasDatabase)
        expectUnusable(
            try database.openStore(),
            saying: "\(database.databasePath), where the state database belongs, is a file")
        expectUnusable(try database.prepare(), saying: "where the state database belongs, is a file")

        let logs = StateDirectory(path: root + "/logs-file")
        try FileManager.default.createDirectory(atPath: logs.path, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: logs.logsPath, contents: Data())
        expectUnusable(
            try logs.prepare(), saying: "\(logs.logsPath), where the attempt logs belong, is a file")

        let missing = StateDirectory(path: root + "/not/yet")
        #expect(!missing.hasDatabase)
        try missing.prepare()
    }

    private func expectUnusable(
        _ body: @autoclosure () throws(StoreError) -> some Any, saying text: String,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try body()
            Issue.record("expected an error saying \(text)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .unusable, sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
            #expect(
                !error.message.contains("cannot create the state directory"), sourceLocation: sourceLocation)
        }
    }
}

/// What the racers of ``StateDirectoryTests/everyLosingRacerNamesTheHolder()`` got.
private final class RaceResults: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var locks: [DirectoryLock] = []
    private var messages: [String] = []

    func add(won: DirectoryLock) { lock.withLock { locks.append(won) } }
    func add(lost message: String) { lock.withLock { messages.append(message) } }
    func taken() -> (Int, [String]) { lock.withLock { (locks.count, messages) } }
}

/// Runs blocking work on a thread of its own, off the cooperative pool.
private func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
