import JobRunnerCore

/// Constraints for runner tests: each check answers from a settable table, each satisfy pops a
/// scripted outcome (success by default) and may flip its constraint to holding; every call is
/// recorded. A satisfy of a constraint named in `hold` waits for ``release(_:)``.
public final class ScriptedConstraints: ConstraintRunner {
    private struct State {
        var holds: [String: Bool]
        var satisfyScripts: [String: [SatisfyOutcome]]
        var checks: [String] = []
        var satisfies: [String] = []
        var held: Set<String>
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    public init(holds: [String: Bool], satisfy: [String: [SatisfyOutcome]] = [:], hold: Set<String> = []) {
        state = Locked(State(holds: holds, satisfyScripts: satisfy, held: hold))
    }

    /// Lets the satisfies of a held constraint, waiting or to come, go on.
    public func release(_ name: String) {
        let waiting = state.withLock { state in
            state.held.remove(name)
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    public func check(_ constraint: ConstraintDefinition) async -> Bool {
        state.withLock { state in
            state.checks.append(constraint.name)
            return state.holds[constraint.name] ?? true
        }
    }

    public func satisfy(_ constraint: ConstraintDefinition) async -> SatisfyOutcome {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let goOn = state.withLock { state in
                guard state.held.contains(constraint.name) else { return true }
                state.waiting.append(continuation)
                return false
            }
            if goOn { continuation.resume() }
        }
        return state.withLock { state in
            state.satisfies.append(constraint.name)
            var script = state.satisfyScripts[constraint.name] ?? []
            let outcome = script.isEmpty ? .satisfied : script.removeFirst()
            state.satisfyScripts[constraint.name] = script
            if outcome == .satisfied { state.holds[constraint.name] = true }
            return outcome
        }
    }

    /// Names of the constraints checked, in order.
    public var checks: [String] { state.withLock { $0.checks } }
    /// Names of the constraints whose satisfy ran, in order.
    public var satisfies: [String] { state.withLock { $0.satisfies } }
}
