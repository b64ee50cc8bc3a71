import Foundation

/// The one deadline and teardown policy of an attempt, whichever way it runs: a shell job's
/// process, an in-process plugin call, a call on a plugin's worker, a plugin's process of the
/// attempt's own.
///
/// - The deadline: `timeout` counts from the moment the attempt's work starts (its process is
///   spawned, its call is made, its worker is had), on the runner's injected clock.
/// - The first of three things ends the work (``AttemptWatch``): its own end, the deadline, a
///   stop of the runner. Work that ends at or after its deadline timed out, even when its end
///   was seen before the timer's: the order in which a busy runner sees the two must not decide.
/// - The teardown of work that did not end by itself: its process group gets SIGTERM, then
///   SIGKILL once `killGrace` has passed on the clock with any member left; then whatever it
///   left behind is swept the same way (JobRunnerShell's `Teardown.end(group:marked:clock:)`).
///   An in-process call has no process: it cannot be ended safely, so it is abandoned and its
///   answer dropped.
/// - The reason: ``Stop/end``, `timeout after D` or `the runner stopped`, the same for all four.
public struct Teardown: Sendable, Hashable {
    /// How long the work may run from its start; nil: no limit.
    public var timeout: Duration?
    /// Time between SIGTERM and SIGKILL whenever a process group is ended.
    public var killGrace: Duration

    /// A policy with this timeout and grace period.
    public init(timeout: Duration? = nil, killGrace: Duration = JobDefinition.defaultKillGrace) {
        self.timeout = timeout
        self.killGrace = killGrace
    }

    /// A job's policy: its `timeout` and `killGrace`.
    public init(job: JobDefinition) {
        self.init(timeout: job.timeout, killGrace: job.killGrace)
    }

    /// The deadline of work that starts at `start`; nil without a timeout, and then `start` is
    /// not asked for (quick in-process calls do not read the clock for nothing).
    public func deadline(from start: @autoclosure () -> Date) -> Deadline? {
        timeout.map { Deadline(date: start().addingTimeInterval($0.seconds), timeout: $0) }
    }

    /// Why the policy ended an attempt's work before it ended by itself.
    public enum Stop: Sendable, Hashable {
        /// Its deadline passed, `after` its start.
        case timedOut(after: Duration)
        /// The runner stopped it (a clean stop, an operator's `cancel` or `skip`).
        case interrupted

        /// How the attempt ended: the one reason for each, whichever way it ran.
        public var end: AttemptEnd {
            switch self {
            case .timedOut(let timeout): .timedOut(after: timeout)
            case .interrupted: .interrupted(.runnerStopped)
            }
        }
    }
}

/// When an attempt's work must have ended.
public struct Deadline: Sendable, Hashable {
    /// The date, on the runner's clock.
    public var date: Date
    /// The timeout it ends, counted from the work's start.
    public var timeout: Duration

    /// A deadline at `date`, `timeout` after the work's start.
    public init(date: Date, timeout: Duration) {
        self.date = date
        self.timeout = timeout
    }

    /// Whether work that ended at `endedAt` ended too late: at or after the deadline.
    public func isMissed(by endedAt: Date) -> Bool { endedAt >= date }
}
