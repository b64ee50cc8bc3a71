import Foundation
import JobRunnerCore
import JobRunnerLMDB
import JobRunnerPostgres
import JobRunnerShell

/// Where the state is kept, and the one place that knows which store keeps it: LMDB in a state
/// directory, or PostgreSQL when `--store URL` (or `$JOBRUNNER_STORE`) names a database. Every
/// command opens its store here and reads through the ``ReadModel``; no other file of the
/// command line names a store's module.
struct StoreOpener: Sendable {
    private let directory: StateDirectory
    /// The `--store` URL as given; nil: the LMDB database of the state directory.
    private let storeURL: String?

    /// - Parameters:
    ///   - path: the state directory, absolute or relative to the current directory (attempt
    ///     logs are kept there with either store, for now).
    ///   - store: a `postgres://` URL, or nil.
    init(path: String, store: String? = nil) {
        directory = StateDirectory(path: path)
        storeURL = store
    }

    /// The state directory, absolute, or the store's URL (without its password), for messages.
    var path: String {
        guard let storeURL else { return directory.path }
        return (try? StoreURL(storeURL).description) ?? StoreURL.redacted(storeURL)
    }

    /// Whether a database exists here (read-only commands say so instead of creating one).
    /// Also true when the state path is there but cannot be used, so that opening it says why;
    /// always true with `--store`, whose opening says what is wrong.
    var hasDatabase: Bool { storeURL != nil || directory.hasDatabase }

    /// Whether hosts share the store (PostgreSQL): a second runner then runs the attempts the
    /// first one queues instead of being refused.
    var isShared: Bool { storeURL != nil }

    /// This host's name in a shared store: `HOST:PID`.
    static var hostName: String { "\(ProcessInfo.processInfo.hostName):\(getpid())" }

    /// Where the attempt logs are.
    var logs: LogLocation { directory.logs }

    /// Who works on the store: the state directory's runner and operator locks, or the
    /// PostgreSQL store's advisory locks.
    var lock: any RunnerLock {
        if let url = try? postgresURL() { return PostgresRunnerLock(url: url) }
        return directory.runnerLock
    }

    /// How the runner at work is woken: SIGUSR1 to the pid its lock records, or a notification.
    var waker: any RunnerWaker {
        if let url = try? postgresURL() { return PostgresWaker(url: url) }
        return directory.runnerWaker
    }

    /// The `--store` URL read; nil without one.
    /// - Throws: ``StoreError`` `.unusable` for a URL that is not one jobrunner takes.
    private func postgresURL() throws(StoreError) -> StoreURL? {
        guard let storeURL else { return nil }
        return try StoreURL(storeURL)
    }

    /// Opens the existing store for reading only (`status`, `runs`, `logs`, `wait`): nothing in
    /// the state directory is created or changed, so an archived one, or one on read-only
    /// media, can be read.
    func openForReading() async throws(StoreError) -> OpenedStore {
        if let url = try postgresURL() { return opened(try await PostgresQueueStore.open(url)) }
        return opened(try directory.openStoreForReading())
    }

    /// Opens the store for reading and writing (`prune`, the operator commands).
    /// - Parameter preparing: creates the state directory first when it is missing.
    func openForWriting(preparing: Bool = false) async throws(StoreError) -> OpenedStore {
        if let url = try postgresURL() { return opened(try await PostgresQueueStore.open(url)) }
        if preparing { try directory.prepare() }
        return opened(try directory.openStore())
    }

    /// Creates or upgrades the PostgreSQL store's schema (`jobrunner migrate`); returns the
    /// versions before and after.
    func migrate() async throws(StoreError) -> (from: Int, to: Int) {
        guard let url = try postgresURL() else {
            throw StoreError(
                .unusable,
                "migrate needs --store URL (or $JOBRUNNER_STORE): the LMDB database needs no migration")
        }
        return try await PostgresQueueStore.migrate(url, appliedBy: "jobrunner \(JobRunnerVersion.current)")
    }

    /// The hosts that worked on the shared store (`jobrunner hosts`), by name.
    func hosts() async throws(StoreError) -> [HostRecord] {
        guard let url = try postgresURL() else {
            throw StoreError(
                .unusable,
                "hosts needs --store URL (or $JOBRUNNER_STORE): only a PostgreSQL store is shared by hosts")
        }
        let store = try await PostgresQueueStore.open(url)
        do {
            let hosts = try await store.hosts()
            await store.close()
            return hosts
        } catch {
            await store.close()
            throw error
        }
    }

    private func opened(_ store: PostgresQueueStore) -> OpenedStore {
        // The commands await every write before they close, so nothing is left to commit: the
        // pool and the listening connection are let go of as the process ends.
        OpenedStore(
            reader: ReadModel(store: store, lock: lock, logs: logs), waker: waker,
            closing: { Task { await store.close() } })
    }

    /// The operator actions (``Operator``) on `store`, opened here for writing.
    func `operator`(_ store: OpenedStore) -> Operator {
        Operator(reader: store.reader, lock: lock, waker: waker, orphans: ProcessGroups(), place: path)
    }

    private func opened(_ store: LMDBQueueStore) -> OpenedStore {
        OpenedStore(
            reader: ReadModel(store: store, lock: lock, logs: logs), waker: waker, closing: { store.close() })
    }

    /// Opens a shared store for a host that runs the attempts another host's runner queues.
    func openForWorker(timing: (heartbeat: Duration, lease: Duration)) async throws(StoreError) -> (
        sharing: any AttemptSharing, store: OpenedStore
    ) {
        guard let url = try postgresURL() else {
            throw StoreError(.unusable, "only a store shared by hosts (--store URL) has attempts to share")
        }
        try directory.prepare()
        let store = try await PostgresQueueStore.open(url)
        let sharing = PostgresAttemptSharing(
            store: store, host: Self.hostName,
            timing: LeaseTiming(heartbeat: timing.heartbeat, lease: timing.lease))
        return (sharing, opened(store))
    }

    // MARK: A runner's store

    /// Opens an existing database, and reads the run to resume, while the job files load
    /// (``StateDirectory/openExistingStoreReadingAhead()``).
    func openEarly() -> EarlyStore {
        let directory = self.directory
        if storeURL != nil { return EarlyStore(task: Task { nil }) }
        return EarlyStore(task: Task { await directory.openExistingStoreReadingAhead() })
    }

    /// Makes the state directory if need be, takes the runner lock, opens the store (the one
    /// opened early, if it still holds the directory's data file) and takes its claim: the
    /// lock held by this process is what lets the claim be the only one.
    /// - Parameter whileWaiting: called once if an operator command must be waited for first.
    /// - Parameter timing: how this host renews its leases on a shared store.
    func openForRunner(
        early: EarlyStore, timing: (heartbeat: Duration, lease: Duration), whileWaiting: () -> Void
    ) async throws(StoreError) -> RunnerStore {
        if let url = try postgresURL() {
            // The schema is checked first: a database that is not a jobrunner store is refused
            // before anything is asked of it. The logs are kept in the state directory for now.
            let store = try await PostgresQueueStore.open(url)
            let hold: any RunnerLockHold
            let claim: StoreClaim
            do {
                try directory.prepare()
                hold = try await lock.lockForRunner(whileWaiting: whileWaiting)
                claim = try await store.claim(
                    owner: "runner \(getpid()) on \(ProcessInfo.processInfo.hostName)")
            } catch {
                await store.close()
                throw error
            }
            // Nobody waits for what an earlier runner queued: it is let go before anything is
            // decided, and the attempts are queued for every host from now on.
            let sharing = PostgresAttemptSharing(
                store: store, host: Self.hostName,
                timing: LeaseTiming(heartbeat: timing.heartbeat, lease: timing.lease))
            try await sharing.abandonEarlierAttempts()
            return RunnerStore(
                store: store, claim: claim, hold: hold, waker: waker, logs: logs, sharing: sharing,
                closing: { Task { await store.close() } })
        }
        try directory.prepare()
        let hold = try await lock.lockForRunner(whileWaiting: whileWaiting)
        // Kept only if it still holds the data file of the directory now locked.
        let store = try directory.openStore(openedEarly: await early.task.value)
        let claim: StoreClaim
        do {
            claim = try await store.claim(owner: "runner \(getpid())")
        } catch {
            store.close()
            throw error
        }
        return RunnerStore(
            store: store, claim: claim, hold: hold, waker: waker, logs: logs, closing: { store.close() })
    }
}

/// A store a command opened, read through its ``ReadModel``; ``close()`` when done.
struct OpenedStore: Sendable {
    /// The queries every command reads through.
    let reader: ReadModel
    /// How the runner at work is woken.
    let waker: any RunnerWaker
    fileprivate let closing: @Sendable () -> Void

    /// The store, for the commands that write.
    var store: any QueueStore { reader.store }
    /// Who works on the store.
    var lock: (any RunnerLock)? { reader.lock }

    /// Lets the store finish what was submitted, then close.
    func close() { closing() }
}

/// The store a runner works on: opened, locked and claimed (``StoreOpener/openForRunner(early:whileWaiting:)``).
struct RunnerStore: Sendable {
    let store: any QueueStore
    /// The claim the runner commits under.
    let claim: StoreClaim
    /// The runner lock, held while this value is.
    let hold: any RunnerLockHold
    /// How other processes wake the runner.
    let waker: any RunnerWaker
    let logs: LogLocation
    /// With a store shared by hosts: how its attempts are queued and claimed; nil for LMDB.
    var sharing: (any AttemptSharing)? = nil
    fileprivate let closing: @Sendable () -> Void

    /// Lets the store finish what was submitted, then close; the lock goes with the last
    /// reference to this value.
    func close() { closing() }
}

/// A store opened early, while the job files load.
struct EarlyStore: Sendable {
    fileprivate let task: Task<LMDBQueueStore?, Never>

    /// Waits for the early opening to end and closes what it opened: for every way out before
    /// the store is taken (a process gone in the middle of a read leaves its slot in the
    /// database's table of readers, which a live runner beside it would keep).
    func letGo() async { await task.value?.close() }
}
