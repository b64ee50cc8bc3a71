import Foundation
import JobRunnerCore
import JobRunnerLMDB
import JobRunnerTesting
import Testing

@Suite struct LMDBStoreTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func stateSurvivesReopening() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
            try await store.commitAsNewOwner([
                .putRun(RunRecord(id: "R", state: .running, startedAt: start, jobIDs: ["a"], runnerPID: 1)),
                .setCurrentRun("R"),
            ])
            store.close()
        }
        let reopened = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { reopened.close() }
        #expect(try await reopened.currentRunID() == "R")
    }

    @Test func concurrentSubmissionsShareTransactions() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        defer { store.close() }
        let claim = try await store.claim(owner: "test")
        let before = store.transactionCount
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<500 {
                group.addTask {
                    try? await store.commit([.putPipeline(PipelineRecord(name: "p\(index)"))], under: claim)
                }
            }
        }
        let used = store.transactionCount - before
        #expect(try await store.pipelines().count == 500)
        #expect(used < 500, "group commit: \(used) transactions for 500 submissions")
    }

    @Test func aNewerSchemaIsRefused() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try LMDBTestSupport.setSchemaVersion(99, in: directory)
        #expect {
            _ = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .newerSchema && error.message.contains("schema 99")
        }
    }

    @Test func aDamagedDatabaseIsRefusedWithAClearError() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let garbage = Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try garbage.write(to: URL(fileURLWithPath: directory + "/data.mdb"))
        #expect {
            _ = try LMDBQueueStore(directory: directory, mapSize: 64 << 20)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .corrupt && error.message.contains("damaged")
        }
    }

    @Test func aStatePathThatIsAFileIsRefused() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/state"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect {
            try StateDirectory(path: file).prepare()
        } throws: { error in
            (error as? StoreError)?.code == .unusable
        }
    }

    @Test func theRunnerLockAdmitsOneHolderAndNamesIt() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = StateDirectory(path: directory)
        try state.prepare()
        var lock: DirectoryLock? = try state.lockForRunner()
        #expect(state.lockHolder() == getpid())
        #expect {
            _ = try state.lockForRunner()
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .locked && error.message.contains("pid \(getpid())")
        }
        withExtendedLifetime(lock) {}
        lock = nil
        // A process another test spawned while the lock was held keeps a copy of its descriptor
        // until it execs; wait that out (blocking flock), so only our release is judged.
        // The limit only guards against a hung suite: the release is what is awaited.
        #expect(await released(state.path, within: .seconds(900)))
        #expect(state.lockHolder() == nil)
        _ = try state.lockForRunner()
    }

    /// Deleting or replacing `runner.lock` under a live runner must not let a second one in.
    @Test func theLockSurvivesItsFileBeingDeleted() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = StateDirectory(path: directory)
        try state.prepare()
        let lock = try state.lockForRunner()
        defer { withExtendedLifetime(lock) {} }
        try FileManager.default.removeItem(atPath: state.lockPath)
        try Data("999999\n".utf8).write(to: URL(fileURLWithPath: state.lockPath))
        #expect {
            _ = try state.lockForRunner()
        } throws: { error in
            (error as? StoreError)?.code == .locked
        }
        #expect(state.lockHolder() != nil, "still held")
    }

    /// Whether nothing holds `path`'s flock within `limit`: a thread waits for it with a
    /// blocking flock, and whichever comes first, that or the limit, answers.
    private func released(_ path: String, within limit: Duration) async -> Bool {
        let answer = Answer()
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        return await withCheckedContinuation { continuation in
            answer.start(continuation)
            Thread {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd >= 0 {
                    flock(fd, LOCK_EX)
                    flock(fd, LOCK_UN)
                    close(fd)
                }
                answer.give(fd >= 0)
            }.start()
            timer = Task {
                guard (try? await Task.sleep(for: limit)) != nil else { return }
                answer.give(false)
            }
        }
    }
}

/// The first answer given, passed to one waiting continuation.
private final class Answer: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Bool, Never>?

    func start(_ continuation: CheckedContinuation<Bool, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    func give(_ value: Bool) {
        let waiting = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
