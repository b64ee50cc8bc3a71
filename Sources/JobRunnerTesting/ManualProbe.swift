import JobRunnerCore

/// A connectivity probe whose answer the test sets.
public final class ManualProbe: ConnectivityProbe {
    private let state: Locked<Bool>
    public init(online: Bool) { state = Locked(online) }
    public func set(online: Bool) { state.withLock { $0 = online } }
    public func isOnline() async -> Bool { state.withLock { $0 } }
}
