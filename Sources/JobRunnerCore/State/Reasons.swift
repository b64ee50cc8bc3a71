import Foundation

/// What a waiting job waits for (SPEC 5.1). Turned into words in one place, ``words``, which
/// `status --json` and `--events` print; nothing reads the words back to decide anything.
public enum WaitingReason: Sendable, Hashable {
    /// A job it needs is not final yet.
    case needs(String)
    /// Its pipeline (or `--jobs`) has no free slot.
    case slot
    /// Its pipeline is suspended by an operator.
    case suspended
    /// It needs the internet and the probe says offline (SPEC 5.5).
    case internet
    /// A constraint's `check` failed; its `satisfy` runs (SPEC 5.6).
    case constraint(String)
    /// A failed attempt's backoff delay runs (SPEC 5.4).
    case backoff
    /// Its attempt was interrupted by a clean stop or a dying runner; it starts again.
    case interrupted
    /// A periodic job waits for its next scheduled date (SPEC 5.8).
    case schedule

    /// The words of `status --json` and events: `needs:ID`, `constraint:NAME`, `backoff`, …
    public var words: String {
        switch self {
        case .needs(let id): "needs:\(id)"
        case .slot: "slot"
        case .suspended: "suspended"
        case .internet: "internet"
        case .constraint(let name): "constraint:\(name)"
        case .backoff: "backoff"
        case .interrupted: "interrupted"
        case .schedule: "schedule"
        }
    }
}

/// Why a job or one of its attempts ended as it did: failed, skipped, blocked or cancelled.
public enum EndReason: Sendable, Hashable {
    /// The process exited with this code.
    case exit(Int32)
    /// The process was killed by this signal.
    case signal(Int32)
    /// The attempt ran past the job's `timeout`, this long; nil in records of versions that did
    /// not say how long.
    case timeout(after: Duration?)
    /// The constraint's `satisfy` failed; the last line of its output (SPEC 5.6).
    case constraintFailed(constraint: String, lastLine: String)
    /// Runners died while this job's attempts ran, too often in a row (SPEC 5.9).
    case crashedTheRunner
    /// Blocked: this need failed, was blocked or cancelled.
    case blockedBy(String)
    case cancelledByOperator
    case skippedByOperator
    /// `overlap: replace`: the job's next occurrence came due while this one ran.
    case replacedByNextOccurrence
    /// `enabled: false`.
    case disabled
    /// `when: failure`, and every need succeeded or was skipped: nothing to clean up after.
    case noNeedFailed
    /// The handler's own words (a plugin's message, a skip reason, a start failure).
    case message(String)

    private static let replacedWords = "replaced by the next occurrence (overlap: replace)"
    private static let noNeedFailedWords = "when: failure, and no need failed"

    /// The words of `status --json` and events: `exit:2`, `timeout after 30s`, `needs:ID`, …
    /// An attempt's reasons are worded by ``AttemptEnd/words``.
    public var words: String {
        switch self {
        case .exit(let code): AttemptEnd.exited(code).words
        case .signal(let signal): AttemptEnd.signalled(signal).words
        case .timeout(let timeout?): AttemptEnd.timedOut(after: timeout).words
        case .timeout(nil): "timeout"
        case .constraintFailed(let name, let line): "constraint \(name) failed: \(line)"
        case .crashedTheRunner: "crashed the runner"
        case .blockedBy(let id): "needs:\(id)"
        case .cancelledByOperator: "cancelled by operator"
        case .skippedByOperator: "skipped by operator"
        case .replacedByNextOccurrence: Self.replacedWords
        case .disabled: "disabled"
        case .noNeedFailed: Self.noNeedFailedWords
        case .message(let text): text
        }
    }

    /// The reason an attempt's end gives the job it decides: an exit, a signal or a timeout as
    /// such, any other end as its words.
    public init(_ end: AttemptEnd) {
        switch end {
        case .exited(let code): self = .exit(code)
        case .signalled(let signal): self = .signal(signal)
        case .timedOut(let timeout): self = .timeout(after: timeout)
        case .succeeded, .skipped, .interrupted, .crashed, .pluginFailed, .pluginRetry, .refused,
            .cannotStart:
            self = .message(end.words)
        }
    }
}

/// A job record's reason: what it waits for while it is not final, why it ended once it is.
public enum JobReason: Sendable, Hashable {
    case waiting(WaitingReason)
    case ended(EndReason)

    /// The words stored and shown.
    public var words: String {
        switch self {
        case .waiting(let reason): reason.words
        case .ended(let reason): reason.words
        }
    }

    /// What a waiting job waits for, if that is what this reason says.
    public var waiting: WaitingReason? {
        if case .waiting(let reason) = self { reason } else { nil }
    }

    /// Reads stored words back into a reason. The one place words become a reason again:
    /// records written by earlier versions, and by this one, hold words.
    /// - Parameter state: the record's state, which tells a waiting reason from an ending one.
    public init(words: String, state: JobState) {
        if state.isFinal || state == .running {
            self = .ended(Self.endReason(words))
        } else {
            self = .waiting(Self.waitingReason(words) ?? .slot)
        }
    }

    private static func waitingReason(_ words: String) -> WaitingReason? {
        switch words {
        case "slot": return .slot
        case "suspended": return .suspended
        case "internet": return .internet
        case "backoff": return .backoff
        case "interrupted": return .interrupted
        case "schedule": return .schedule
        default:
            if let id = words.suffix(afterPrefix: "needs:") { return .needs(id) }
            if let name = words.suffix(afterPrefix: "constraint:") { return .constraint(name) }
            return nil
        }
    }

    private static func endReason(_ words: String) -> EndReason {
        switch words {
        case "timeout": return .timeout(after: nil)
        case "crashed the runner": return .crashedTheRunner
        case "cancelled by operator": return .cancelledByOperator
        case "skipped by operator": return .skippedByOperator
        case EndReason.replacedByNextOccurrence.words: return .replacedByNextOccurrence
        case "disabled": return .disabled
        case EndReason.noNeedFailed.words: return .noNeedFailed
        default:
            if let code = words.suffix(afterPrefix: "exit:").flatMap({ Int32($0) }) { return .exit(code) }
            if let signal = words.suffix(afterPrefix: "signal:").flatMap({ Int32($0) }) {
                return .signal(signal)
            }
            if let id = words.suffix(afterPrefix: "needs:") { return .blockedBy(id) }
            if let timeout = words.suffix(afterPrefix: "timeout after ").flatMap(JobDuration.parse),
                EndReason.timeout(after: timeout).words == words
            {
                return .timeout(after: timeout)
            }
            if let rest = words.suffix(afterPrefix: "constraint "), let split = rest.range(of: " failed: ") {
                return .constraintFailed(
                    constraint: String(rest[..<split.lowerBound]), lastLine: String(rest[split.upperBound...])
                )
            }
            return .message(words)
        }
    }
}

extension String {
    fileprivate func suffix(afterPrefix prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}

extension EndReason {
    /// How an operator's `cancel` or `skip` ended a job.
    static func byOperator(_ kind: OperatorRequest.Kind) -> EndReason {
        kind == .cancel ? .cancelledByOperator : .skippedByOperator
    }
}
