import CLMDB
import Glibc
import JobRunnerCore

/// The one place where LMDB's return codes become Swift errors, with `mdb_strerror`'s text.
struct LMDBError: Error, CustomStringConvertible {
    let code: Int32
    let operation: String
    /// What is damaged, in words, when a stored record was found damaged (``damaged(_:)``).
    var damage: String?

    init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// A stored record that is damaged: `what` says which and how, for the sentence that
    /// names the file (``storeError(path:)``).
    static func damaged(_ what: String) -> LMDBError {
        var error = LMDBError(code: MDB_CORRUPTED, operation: what)
        error.damage = what
        return error
    }

    var description: String {
        if let damage { return damage }
        let text = mdb_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return "\(operation): \(text)"
    }

    /// Throws unless `code` is success.
    static func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(LMDBError) {
        guard code == 0 else { throw LMDBError(code: code, operation: operation()) }
    }

    /// The store error a user sees, saying what to do.
    func storeError(path: String) -> StoreError {
        if let damage {
            return StoreError(
                .corrupt,
                "the state database \(path)/data.mdb is damaged: \(damage); restore it from a backup, or move the state directory aside to start afresh",
                cause: self)
        }
        switch code {
        case MDB_INVALID, MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_VERSION_MISMATCH, MDB_PANIC:
            return StoreError(
                .corrupt,
                "the state database in \(path) is damaged (\(self)); move the directory aside to start afresh, or restore it from a backup",
                cause: self)
        case MDB_MAP_FULL:
            return StoreError(
                .io, "the state database in \(path) is full (\(self)); remove old runs or move it aside",
                cause: self)
        case EACCES, EPERM, EROFS:
            return StoreError(
                .unusable,
                "cannot use the state directory \(path) (\(self)); check its permissions or pass --state DIR",
                cause: self)
        case ENOTDIR, EEXIST:
            return StoreError(
                .unusable,
                "the state path \(path) is not a directory (\(self)); pass --state DIR with a directory",
                cause: self)
        default:
            return StoreError(.io, "cannot use the state database in \(path) (\(self))", cause: self)
        }
    }
}
