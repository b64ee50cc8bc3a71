import CLMDB
import Foundation
import JobRunnerCore

/// Named tables of the store.
struct Tables {
    var meta: MDB_dbi = 0
    var runs: MDB_dbi = 0
    var jobs: MDB_dbi = 0
    var attempts: MDB_dbi = 0
    var outputs: MDB_dbi = 0
    var pipelines: MDB_dbi = 0
    var requests: MDB_dbi = 0
    var schedules: MDB_dbi = 0
    /// The committed events, a row per commit (``EventRows``); nil in a database opened for
    /// reading that was written before it had them.
    var events: MDB_dbi?
}

/// An open LMDB environment. Transactions live only inside `read` and `write` closures, so
/// each commits or aborts exactly once and none can leak; the environment uses `MDB_NOTLS`,
/// so read transactions may run on any thread.
final class Environment: @unchecked Sendable {
    // @unchecked: the handle is only used through LMDB calls, which are thread-safe for an
    // MDB_NOTLS environment as long as one thread at a time writes (the store's writer).
    let handle: OpaquePointer
    let path: String
    /// Whether it was opened for writing.
    private let writable: Bool
    private(set) var tables = Tables()
    private var mappedPages: MappedPages?
    /// Rows of the `meta` table written as they are (``Transaction/putPlain(_:key:value:)``)
    /// with the next write transaction, then forgotten: the schema version a file of an older
    /// schema gets with its first write.
    let beforeNextWrite = Locked<[(key: [UInt8], value: [UInt8])]>([])

    /// How an environment is opened.
    enum Access: Equatable {
        /// Reading and writing; creates the database and its tables when missing.
        case readWrite
        /// Reading only (`MDB_RDONLY`): nothing is created or written, so a state directory
        /// on read-only media can be read. `withoutLockFile` opens it with `MDB_NOLOCK`, for a
        /// lock file that cannot be written; readers are then not registered, which is only
        /// safe while no runner writes to it.
        case readOnly(withoutLockFile: Bool)
    }

    /// - Parameters:
    ///   - creatingTables: whether a writable one creates its missing tables (and runs
    ///     `prepare`) as it opens. False for a file that holds records: nothing is written
    ///     before they are checked, and ``createMissingTables()`` comes after.
    ///   - prepare: runs in the transaction that opens (and creates) the tables, after they are
    ///     open: what it writes is committed with them, or not at all. Not run when `access` is
    ///     read-only or the tables are not created.
    init(
        directory: String, mapSize: Int, access: Access = .readWrite, creatingTables: Bool = true,
        prepare: (borrowing Transaction, Tables) throws(LMDBError) -> Void = { _, _ in }
    ) throws(LMDBError) {
        var env: OpaquePointer?
        try LMDBError.check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw LMDBError(code: ENOMEM, operation: "mdb_env_create") }
        var flags = UInt32(MDB_NOTLS)
        if case .readOnly(let withoutLockFile) = access {
            flags |= UInt32(MDB_RDONLY) | (withoutLockFile ? UInt32(MDB_NOLOCK) : 0)
        } else {
            // A commit flushes its data pages; its meta page reaches the disk with the next
            // commit's flush (or the sync when the environment closes): a power loss undoes at
            // most the last commit and never corrupts the store, which SPEC 5.1 allows. The
            // reasoning is in docs/architecture.md, "Durability and group commit".
            flags |= UInt32(MDB_NOMETASYNC)
        }
        do {
            try LMDBError.check(mdb_env_set_maxdbs(env, 16), "mdb_env_set_maxdbs")
            try LMDBError.check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
            try LMDBError.check(mdb_env_open(env, directory, flags, 0o600), "mdb_env_open")
            // Reader slots of processes that died (killed, or gone without closing while
            // another kept the database open, such as a refused runner beside a live one) are
            // freed: each would keep every page freed after its snapshot from being reused,
            // and enough of them fill the table of readers. A reader leaves that to writers.
            if access == .readWrite {
                var cleared: Int32 = 0
                try LMDBError.check(mdb_reader_check(env, &cleared), "mdb_reader_check")
            }
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.handle = env
        self.path = directory
        self.writable = access == .readWrite
        if access == .readWrite && creatingTables {
            var tables = Tables()
            try write { txn throws(LMDBError) in
                tables = try Self.openTables(in: txn, creating: true)
                try prepare(txn, tables)
            }
            self.tables = tables
            // `self` is whole by now: on an error `deinit` closes the environment.
        } else {
            self.tables = try openTablesReadOnly()
        }
        mappedPages = MappedPages(dataFile: directory + "/data.mdb")
    }

    private static func openTables(in txn: borrowing Transaction, creating: Bool) throws(LMDBError) -> Tables
    {
        var tables = Tables()
        tables.meta = try txn.open("meta", creating: creating)
        tables.runs = try txn.open("runs", creating: creating)
        tables.jobs = try txn.open("jobs", creating: creating)
        tables.attempts = try txn.open("attempts", creating: creating)
        tables.outputs = try txn.open("outputs", creating: creating)
        tables.pipelines = try txn.open("pipelines", creating: creating)
        tables.requests = try txn.open("requests", creating: creating)
        tables.schedules = try txn.open("schedules", creating: creating)
        // Came without a schema change: a database written before has none until a writer
        // opens it, and reads as having no events meanwhile.
        do {
            tables.events = try txn.open("events", creating: creating)
        } catch  where !creating && error.code == MDB_NOTFOUND {
            tables.events = nil
        }
        return tables
    }

    /// Creates the tables a file written by an older jobrunner lacks (`events`), once its
    /// records were checked; writes nothing when it has them all.
    func createMissingTables() throws(LMDBError) {
        guard writable, tables.events == nil else { return }
        var tables = Tables()
        try write { txn throws(LMDBError) in tables = try Self.openTables(in: txn, creating: true) }
        self.tables = tables
    }

    /// The tables opened in a read-only transaction, committed so their handles stay open
    /// (LMDB closes the handles a transaction opened when it is aborted).
    private func openTablesReadOnly() throws(LMDBError) -> Tables {
        var txn: OpaquePointer?
        try LMDBError.check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        guard let txn else { throw LMDBError(code: EINVAL, operation: "mdb_txn_begin") }
        let tables: Tables
        do {
            tables = try Self.openTables(in: Transaction(handle: txn), creating: false)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try LMDBError.check(mdb_txn_commit(txn), "mdb_txn_commit")
        return tables
    }

    /// Lets go of the data file's pages this process has mapped (see ``MappedPages``); call it
    /// between write transactions, after one that touched many pages.
    func releaseMappedPages() {
        var descriptor: Int32 = -1
        guard let mappedPages, mdb_env_get_fd(handle, &descriptor) == 0 else { return }
        // The file holds every page in use: LMDB writes each one at its place.
        mappedPages.release(length: Int(lseek(descriptor, 0, SEEK_END)))
    }

    deinit {
        // The last commit's meta page, flushed now rather than whenever the system writes it
        // back: a runner or command that ended leaves nothing a power loss could undo. (Not
        // read-only: a sync is refused there, and there is nothing to flush.)
        if writable { mdb_env_sync(handle, 1) }
        mdb_env_close(handle)
    }

    /// Whether the data file this environment has open is the one now at `path`: the same
    /// device and inode (a state directory can be moved aside while it is open).
    func holdsFile(at path: String) -> Bool {
        var fd: Int32 = -1
        guard mdb_env_get_fd(handle, &fd) == 0 else { return false }
        var open = stat()
        var named = stat()
        guard fstat(fd, &open) == 0, stat(path, &named) == 0 else { return false }
        return open.st_dev == named.st_dev && open.st_ino == named.st_ino
    }

    /// Runs `body` in a write transaction and commits it (one flush of its data pages, which also
    /// makes the commit before it durable whole); aborts if `body` throws.
    func write<Result>(_ body: (borrowing Transaction) throws(LMDBError) -> Result) throws(LMDBError)
        -> Result
    {
        var txn: OpaquePointer?
        try LMDBError.check(mdb_txn_begin(handle, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw LMDBError(code: EINVAL, operation: "mdb_txn_begin") }
        let transaction = Transaction(handle: txn)
        let result: Result
        let rows = beforeNextWrite.withLock { $0 }
        do {
            result = try body(transaction)
            for row in rows { try transaction.putPlain(tables.meta, key: row.key, value: row.value) }
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try LMDBError.check(mdb_txn_commit(txn), "mdb_txn_commit")
        if !rows.isEmpty { beforeNextWrite.withLock { $0 = [] } }
        return result
    }

    /// Runs `body` in a read-only transaction.
    func read<Result>(_ body: (borrowing Transaction) throws(LMDBError) -> Result) throws(LMDBError) -> Result
    {
        var txn: OpaquePointer?
        try LMDBError.check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        guard let txn else { throw LMDBError(code: EINVAL, operation: "mdb_txn_begin") }
        defer { mdb_txn_abort(txn) }
        return try body(Transaction(handle: txn))
    }
}

/// A transaction handle, valid only inside the closure it was given to.
struct Transaction: ~Copyable {
    let handle: OpaquePointer

    /// The id of the last transaction committed when a read-only one began: two read-only
    /// transactions with the same id see the same data.
    var id: Int { mdb_txn_id(handle) }

    /// The table `name`, created when missing if `creating`.
    func open(_ name: String, creating: Bool = true) throws(LMDBError) -> MDB_dbi {
        var dbi: MDB_dbi = 0
        try LMDBError.check(
            mdb_dbi_open(handle, name, creating ? UInt32(MDB_CREATE) : 0, &dbi), "mdb_dbi_open(\(name))")
        return dbi
    }

    /// Stores `value` under `key`, framed with its checksum (``StoredValue``): LMDB reserves the
    /// room in its page and the frame is written there, so the value is copied once.
    func put(_ dbi: MDB_dbi, key: [UInt8], value: [UInt8]) throws(LMDBError) {
        // LMDB only reads the bytes a key points to: they are lent as they are, not copied into
        // an array of their own (the writer's keys are also in its set of rows).
        let code = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                var keyVal = MDB_val(
                    mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var valueVal = MDB_val(mv_size: StoredValue.headerSize + valueBytes.count, mv_data: nil)
                let code = mdb_put(handle, dbi, &keyVal, &valueVal, UInt32(MDB_RESERVE))
                guard code == 0, let room = valueVal.mv_data else { return code == 0 ? EINVAL : code }
                StoredValue.frame(key: keyBytes, payload: valueBytes, into: room)
                return 0
            }
        }
        try LMDBError.check(code, "mdb_put")
    }

    /// Stores `value` under `key` as it is, without a checksum: only the schema version, which
    /// every jobrunner, of any schema, must be able to read.
    func putPlain(_ dbi: MDB_dbi, key: [UInt8], value: [UInt8]) throws(LMDBError) {
        let code = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                var keyVal = MDB_val(
                    mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var valueVal = MDB_val(
                    mv_size: valueBytes.count,
                    mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                return mdb_put(handle, dbi, &keyVal, &valueVal, 0)
            }
        }
        try LMDBError.check(code, "mdb_put")
    }

    /// Deletes a key; a missing key is not an error.
    func delete(_ dbi: MDB_dbi, key: [UInt8]) throws(LMDBError) {
        let code = key.withUnsafeBytes { keyBytes in
            var keyVal = MDB_val(
                mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return mdb_del(handle, dbi, &keyVal, nil)
        }
        if code == MDB_NOTFOUND { return }
        try LMDBError.check(code, "mdb_del")
    }

    /// The payload stored under `key`, its checksum verified (``StoredValue``); nil when there
    /// is none.
    /// - Throws: a damaged record's error when the checksum does not match.
    func get(_ dbi: MDB_dbi, key: [UInt8]) throws(LMDBError) -> [UInt8]? {
        guard let value = try getPlain(dbi, key: key) else { return nil }
        let result: Result<[UInt8], LMDBError> = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                Result { () throws(LMDBError) in
                    let opened = try Self.open(valueBytes, key: keyBytes)
                    return opened.checked ? Array(opened.payload) : value
                }
            }
        }
        return try result.get()
    }

    /// The bytes stored under `key` as they are (the schema version, ``putPlain(_:key:value:)``).
    func getPlain(_ dbi: MDB_dbi, key: [UInt8]) throws(LMDBError) -> [UInt8]? {
        var key = key
        var value = MDB_val()
        let code = key.withUnsafeMutableBytes { keyBytes in
            var keyVal = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
            return mdb_get(handle, dbi, &keyVal, &value)
        }
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_get")
        return Self.bytes(value)
    }

    /// A stored value's payload, its checksum verified; the one place reads judge a value.
    static func open(_ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws(LMDBError)
        -> StoredValue.Opened
    {
        guard let opened = StoredValue.open(value, key: key) else {
            throw LMDBError.damaged(
                "the stored record \(StoredValue.describe(key: key)) does not match its checksum")
        }
        return opened
    }

    /// Every key/value pair whose key starts with `prefix` (all pairs when it is empty), in key
    /// order, handing over the bytes where LMDB keeps them: valid only during the call, and
    /// copied only by a visitor that keeps them. Each value is its payload, its checksum
    /// verified (``StoredValue``); a damaged one throws.
    ///
    /// There is deliberately no variant that copies both into arrays for the visitor: where the
    /// visitor ignored one of them, the release build (Swift 6.2) freed the unused copy before
    /// filling it, and the copy then wrote into freed memory (a pruning `serve` aborted with
    /// `malloc(): mismatching next->prev_size`; AddressSanitizer on a release build showed the
    /// write). A visitor copies what it uses, so no copy is ever dead.
    func scanInPlace(
        _ dbi: MDB_dbi, prefix: [UInt8],
        _ visit: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(LMDBError) -> Void
    )
        throws(LMDBError)
    {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(handle, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var start = prefix
        var key = MDB_val()
        var value = MDB_val()
        var code: Int32 = start.withUnsafeMutableBytes { bytes in
            key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
            return prefix.isEmpty
                ? mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
                : mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
        }
        while code == 0 {
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            guard keyBytes.starts(with: prefix) else { return }
            let opened = try Self.open(
                UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size), key: keyBytes)
            try visit(keyBytes, opened.payload)
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try LMDBError.check(code, "mdb_cursor_get") }
    }

    /// Every key/value pair of a table, in key order, as stored: frames and all, for the check
    /// of every record (``RecordCheck``), which judges each one itself.
    func scanStored(
        _ dbi: MDB_dbi,
        _ visit: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(LMDBError) -> Void
    ) throws(LMDBError) {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(handle, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &value, MDB_FIRST)
        while code == 0 {
            try visit(
                UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
                UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try LMDBError.check(code, "mdb_cursor_get") }
    }

    /// The first or the last key of a table, nil when it is empty.
    func edgeKey(_ dbi: MDB_dbi, last: Bool) throws(LMDBError) -> [UInt8]? {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(handle, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var value = MDB_val()
        let code = mdb_cursor_get(cursor, &key, &value, last ? MDB_LAST : MDB_FIRST)
        if code == MDB_NOTFOUND { return nil }
        try LMDBError.check(code, "mdb_cursor_get")
        return Self.bytes(key)
    }

    /// The key/value pairs from the first key at or after `start` on, in key order, while
    /// `visit` returns true; each value its payload, its checksum verified.
    func scan(
        _ dbi: MDB_dbi, from start: [UInt8],
        _ visit: (_ key: [UInt8], _ value: [UInt8]) throws(LMDBError) -> Bool
    ) throws(LMDBError) {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(handle, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var first = start
        var key = MDB_val()
        var value = MDB_val()
        var code: Int32 = first.withUnsafeMutableBytes { bytes in
            key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
            return mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE)
        }
        while code == 0 {
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            let opened = try Self.open(
                UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size), key: keyBytes)
            guard try visit(Array(keyBytes), Array(opened.payload)) else { return }
            code = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try LMDBError.check(code, "mdb_cursor_get") }
    }

    private static func bytes(_ value: MDB_val) -> [UInt8] {
        guard let data = value.mv_data, value.mv_size > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: value.mv_size))
    }
}
