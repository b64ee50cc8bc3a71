import Foundation

/// The runner's only source of time: wall-clock dates for records, and sleeping until one.
/// Injected so tests drive time by hand instead of sleeping.
public protocol RunnerClock: Sendable {
    /// The current wall-clock date.
    func now() -> Date
    /// Suspends until `deadline`, or throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Date) async throws
}

/// The real clock.
public struct SystemClock: RunnerClock {
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(until deadline: Date) async throws {
        let interval = deadline.timeIntervalSinceNow
        if interval > 0 {
            try await Task.sleep(for: .milliseconds(Int64((interval * 1000).rounded(.up))))
        }
        try Task.checkCancellation()
    }
}

/// Numbers in [0, 1) for jitter; injected so backoff is exact under test.
public protocol RandomSource {
    mutating func nextUnit() -> Double
}

/// Any source, as a concrete type: what a stored existential needs to be passed `inout`.
struct AnyRandomSource: RandomSource {
    private var base: any RandomSource
    init(_ base: any RandomSource) { self.base = base }
    mutating func nextUnit() -> Double { base.nextUnit() }
}

/// The system's random generator.
public struct SystemRandomSource: RandomSource {
    private var generator = SystemRandomNumberGenerator()
    public init() {}
    public mutating func nextUnit() -> Double { Double.random(in: 0..<1, using: &generator) }
}

/// A repeatable source (SplitMix64) for tests and reproducible runs.
public struct SeededRandomSource: RandomSource {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func nextUnit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
