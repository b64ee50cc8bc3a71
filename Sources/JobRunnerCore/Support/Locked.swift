import Glibc

/// A value behind a lock: the one way jobrunner shares state between threads.
///
/// It has the shape of the standard library's `Mutex` (`withLock`), but is built on a
/// `pthread_mutex_t`, which ThreadSanitizer understands. `Synchronization.Mutex` on Linux takes
/// its lock with an atomic inlined into the caller, but when the lock is contended it waits and
/// hands over inside `libswiftSynchronization.so` with futex system calls, which
/// ThreadSanitizer does not see: every access inside a contended `Mutex` then reads as a data
/// race, and the real races `make tsan` exists to find would hide among them.
public final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched with `mutex` held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the lock held; returns what it returns.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        lock()
        defer { unlock() }
        return try body(&storedValue)
    }

    // The members `withLock` inlines into other modules.
    @usableFromInline
    func lock() { pthread_mutex_lock(mutex) }

    @usableFromInline
    func unlock() { pthread_mutex_unlock(mutex) }

    @usableFromInline
    var storedValue: Value {
        _read { yield value }
        _modify { yield &value }
    }
}
