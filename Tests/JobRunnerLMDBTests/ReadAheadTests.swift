import Foundation
import JobRunnerCore
import JobRunnerTesting
import Synchronization
import Testing

@testable import JobRunnerLMDB

/// A runner reads the current run's rows while its job files load (`readAhead`), and resuming
/// takes them only when nothing was committed since: rows older than the store's last commit
/// would resume a run as it no longer is.
@Suite struct ReadAheadTests {
    let resuming = ResumeReadingTests()

    func lmdbStoreWithRun(in directory: String) async throws -> LMDBQueueStore {
        try #require(try await resuming.storeWithRun(.lmdb, in: directory) as? LMDBQueueStore)
    }

    @Test func rowsReadAheadGiveTheRunThatReadingThenGives() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await lmdbStoreWithRun(in: directory)
        let plan = resuming.plan
        let direct = try #require(try await store.resumableRun(runID: "R", plan: plan))
        store.readAhead()
        #expect(store.rowsReadAhead.withLock { $0?.progress.count } == resuming.stored.count)
        let ahead = try #require(try await store.resumableRun(runID: "R", plan: plan))
        #expect(store.rowsReadAhead.withLock { $0 == nil }, "taken once, then let go")
        #expect(ahead.run == direct.run)
        #expect(ahead.attempts == direct.attempts)
        #expect(ahead.outputs == direct.outputs)
        for job in plan.jobs { #expect(ahead.record(job.id) == direct.record(job.id), "\(job.id)") }
    }

    /// Rows that no longer match the store are never taken: the rows read ahead here say `head`
    /// is pending, and a commit after them made it succeed.
    @Test func rowsReadBeforeACommitAreReadAgain() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await lmdbStoreWithRun(in: directory)
        store.readAhead()
        #expect(store.rowsReadAhead.withLock { $0 != nil })
        var head = try #require(resuming.stored.first { $0.jobID == "head" })
        head.state = .succeeded
        head.attempts = 1
        try await store.commitAsNewOwner([.putJob(runID: "R", head)])
        let resumable = try #require(try await store.resumableRun(runID: "R", plan: resuming.plan))
        #expect(resumable.record("head")?.state == .succeeded)
        #expect(resumable.record("head")?.attempts == 1)
    }

    /// The rows read ahead are what resuming takes when they match: rows marked as read by the
    /// transaction that reads next are taken as they are, without reading the store.
    @Test func matchingRowsAreTakenWithoutReadingAgain() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try await lmdbStoreWithRun(in: directory)
        store.readAhead()
        let marked = try #require(
            store.rowsReadAhead.withLock { rows -> RowsReadAhead? in
                guard let rows else { return nil }
                let marker = JobProgress(jobID: "head", state: .skipped, reason: .ended(.skippedByOperator))
                return RowsReadAhead(
                    transaction: rows.transaction, run: rows.run,
                    progress: rows.progress.filter { $0.jobID != "head" } + [marker],
                    attempts: rows.attempts, outputs: rows.outputs)
            })
        store.rowsReadAhead.withLock { $0 = marked }
        let resumable = try #require(try await store.resumableRun(runID: "R", plan: resuming.plan))
        #expect(resumable.record("head")?.state == .skipped)
    }

    @Test func nothingIsReadAheadWithoutARunToResume() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let empty = try LMDBQueueStore(directory: directory + "/empty", mapSize: 64 << 20)
        empty.readAhead()
        #expect(empty.rowsReadAhead.withLock { $0 == nil })

        let store = try await lmdbStoreWithRun(in: directory)
        var finished = resuming.run
        finished.state = .succeeded
        try await store.commitAsNewOwner([.putRun(finished)])
        store.readAhead()
        #expect(store.rowsReadAhead.withLock { $0 == nil }, "a final run is not resumed")
    }

    /// A state directory without a database is left as it is: loading job files that turn out
    /// to be invalid must not have made one.
    @Test func anEmptyStateDirectoryIsNotOpenedEarly() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = StateDirectory(path: directory + "/state")
        #expect(await state.openExistingStoreReadingAhead() == nil)
        #expect(!FileManager.default.fileExists(atPath: directory + "/state"))
    }

    /// The store opened early is used only while it holds the data file of the directory the
    /// runner then locks: a state directory moved aside meanwhile keeps its own database, and
    /// the run goes into the one now at the path.
    @Test func anEarlyStoreWhoseDirectoryWasMovedAsideIsNotKept() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let state = StateDirectory(path: directory + "/state")
        try state.prepare()
        do {
            let first = try state.openStore()
            try await first.commitAsNewOwner([.setCurrentRun("moved")])
            first.close()
        }
        do {
            let kept = try #require(await state.openExistingStoreReadingAhead())
            #expect(try state.openStore(openedEarly: kept) === kept, "nothing moved: kept")
            kept.close()
        }

        let early = try #require(await state.openExistingStoreReadingAhead())
        try FileManager.default.moveItem(atPath: directory + "/state", toPath: directory + "/aside")
        try state.prepare()
        let store = try state.openStore(openedEarly: early)
        #expect(store !== early)
        #expect(
            try await store.currentRunID() == nil, "the database now at the path, not the one moved aside")
    }
}
