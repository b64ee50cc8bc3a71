/// A failure of the state directory or its database. Always reported with exit status 3.
///
/// What a user reads is ``message``, a sentence that says what to do; the error the store met
/// underneath (LMDB's, the file system's, a database driver's) is kept in ``cause`` for logs
/// and for code that tells failures apart.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    public enum Code: Sendable, Hashable {
        /// Another runner holds the state directory.
        case locked
        /// The state path cannot be used as a directory (a file, no permission, …).
        case unusable
        /// The database is damaged.
        case corrupt
        /// The database was written by a newer jobrunner.
        case newerSchema
        /// A read or write failed.
        case io
        /// A commit was made under a claim the store no longer honours: another owner claimed
        /// the store's runs since (a newer fencing number), or the claim was released. Nothing
        /// of that commit was written.
        case staleClaim
    }

    public var code: Code
    public var message: String
    /// The error underneath, when there is one.
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { message }
}
