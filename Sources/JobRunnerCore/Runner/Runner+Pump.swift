import Foundation
import Logging

extension Runner {
    /// The loop's state while a run goes on: the scheduler, what is being committed, the tasks
    /// that perform effects. Used only by the task running ``Runner/run()``.
    final class Pump {
        private let runner: Runner
        private(set) var scheduler: Scheduler
        /// Decisions submitted to the store and not yet durable.
        private var inFlight = 0
        private(set) var stopSignal: Int32?
        private(set) var storeFailure: StoreError?
        /// Attempts run as tasks of their own, not children of a task group: the runtime keeps
        /// a group's children in a list it walks to add and remove one, so 20,000 attempts at
        /// once (an unlimited pipeline) made each start and end cost O(n). Each is cancelled on
        /// a stop, and the loop ends only after every one has reported its end.
        private var attemptTasks: [String: (attempt: Int, task: Task<Void, Never>)] = [:]
        /// Constraint checks and satisfies under way, awaited before the run returns.
        private var sideTasks: [Int: Task<Void, Never>] = [:]
        private var nextSideTask = 0
        private var timer: (date: Date, task: Task<Void, Never>)?

        init(runner: Runner, scheduler: Scheduler) {
            self.runner = runner
            self.scheduler = scheduler
        }

        /// Whether the run is over: nothing runs or waits to be stored, and either every job is
        /// final or a stop was asked for.
        var isDone: Bool {
            scheduler.isIdle && inFlight == 0 && (scheduler.isFinished || stopSignal != nil)
        }

        func receive(_ message: Message) {
            switch message {
            case .input(let input):
                if case .attemptEnded(let jobID, let attempt, _) = input,
                    attemptTasks[jobID]?.attempt == attempt
                {
                    attemptTasks[jobID] = nil
                }
                take([input])
            case .durable(.success, let effects):
                inFlight -= 1
                take(perform(effects))
            case .durable(.failure(let error), _):
                inFlight -= 1
                if storeFailure == nil {
                    storeFailure = error
                    runner.logger.error("cannot store state; stopping", metadata: ["error": "\(error)"])
                }
                stop(SIGTERM)
            case .wake:
                timer = nil
                take([.tick])
            case .poke:
                if stopSignal == nil { take(readStore()) }
            case .stop(let signal):
                stop(signal)
            }
            rearmTimer()
        }

        /// Hands inputs to the scheduler and submits what it decided.
        func take(_ inputs: [SchedulerInput]) {
            guard !inputs.isEmpty else { return }
            submit(scheduler.handle(inputs, now: runner.clock.now()))
        }

        /// Stores a decision's changes; its effects follow once they are durable.
        func submit(_ decision: Decision) {
            for answer in decision.answers {
                runner.logger.info(
                    "\(answer.request.kind.rawValue) \(answer.request.jobID): \(answer.result)")
            }
            guard storeFailure == nil, !decision.changes.isEmpty || !decision.effects.isEmpty else { return }
            inFlight += 1
            let mailbox = runner.mailbox
            let effects = decision.effects
            runner.store.submit(decision.changes) { result in mailbox.yield(.durable(result, effects)) }
        }

        private func stop(_ signal: Int32) {
            guard stopSignal == nil else { return }
            stopSignal = signal
            runner.logger.notice(
                "stopping: no new attempts; ending the running ones", metadata: ["signal": "\(signal)"])
            for (_, running) in attemptTasks { running.task.cancel() }
            for (_, task) in sideTasks { task.cancel() }
            timer?.task.cancel()
            timer = nil
            take([.stop])
        }

        /// Performs durable effects; returns inputs that are known at once.
        private func perform(_ effects: [Effect]) -> [SchedulerInput] {
            var inputs: [SchedulerInput] = []
            for effect in effects {
                switch effect {
                case .emit(let event):
                    runner.observer.record(event)
                case .startAttempt(let order):
                    guard stopSignal == nil, let job = runner.workload.job(order.jobID) else {
                        // Decided before the stop, never begun.
                        inputs.append(
                            .attemptEnded(
                                jobID: order.jobID, attempt: order.attempt,
                                AttemptResult(
                                    outcome: .interrupted, reason: "the runner stopped before it started")))
                        continue
                    }
                    startAttempt(order, job: job)
                case .checkConstraints(let jobID, let names):
                    let constraints = names.compactMap { runner.workload.constraints[$0] }
                    let constraintRunner = runner.constraintRunner
                    sideTask {
                        var failed: String?
                        for constraint in constraints where !Task.isCancelled {
                            if let constraintRunner, !(await constraintRunner.check(constraint)) {
                                failed = constraint.name
                                break
                            }
                        }
                        return .constraintsChecked(jobID: jobID, failed: failed)
                    }
                case .satisfy(let name):
                    let constraint = runner.workload.constraints[name]
                    let constraintRunner = runner.constraintRunner
                    sideTask {
                        var outcome = SatisfyOutcome.satisfied
                        if let constraintRunner, let constraint {
                            outcome = await constraintRunner.satisfy(constraint)
                        }
                        return .satisfyEnded(constraint: name, outcome)
                    }
                case .endAttempt(let jobID, let attempt, let pid, let startTime):
                    if let running = attemptTasks[jobID], running.attempt == attempt {
                        // The handler ends the process group and reports `interrupted`.
                        running.task.cancel()
                    } else if let orphans = runner.orphans {
                        // Unstructured: ending a process group takes up to the grace period.
                        let orphan = Orphan(
                            runID: scheduler.run.id, jobID: jobID, attempt: attempt, pid: pid,
                            startTime: startTime)
                        Task { await orphans.terminate(orphan) }
                    }
                }
            }
            return inputs
        }

        private func startAttempt(_ order: AttemptOrder, job: JobDefinition) {
            let mailbox = runner.mailbox
            let orphans = runner.orphans
            let request = AttemptRequest(
                runID: scheduler.run.id, job: job, attempt: order.attempt, logPath: order.logPath,
                workDirectory: "\(runner.options.logDirectory)/\(scheduler.run.id)",
                neededOutputs: order.neededOutputs,
                onSpawn: { pid in
                    mailbox.yield(
                        .input(
                            .attemptSpawned(
                                jobID: order.jobID, attempt: order.attempt, pid: pid,
                                pidStartTime: orphans?.startTime(of: pid))))
                })
            let handler = runner.handler
            let task = Task {
                let result = await handler.run(request)
                mailbox.yield(.input(.attemptEnded(jobID: order.jobID, attempt: order.attempt, result)))
            }
            attemptTasks[order.jobID] = (order.attempt, task)
        }

        /// Runs a constraint command as a task whose result comes back as an input.
        private func sideTask(_ body: @escaping @Sendable () async -> SchedulerInput) {
            let id = nextSideTask
            nextSideTask += 1
            let mailbox = runner.mailbox
            sideTasks[id] = Task {
                mailbox.yield(.input(await body()))
            }
            // Finished side tasks are dropped when the run ends; a run has few of them.
        }

        /// Suspensions and operator requests as the store holds them now.
        private func readStore() -> [SchedulerInput] {
            do {
                let suspended = try runner.store.pipelines().mapValues(\.suspended)
                let requests = try runner.store.requests(runID: scheduler.run.id)
                return [.suspensions(suspended), .operatorRequests(requests, stored: true)]
            } catch {
                runner.logger.warning("cannot read operator requests", metadata: ["error": "\(error)"])
                return []
            }
        }

        private func rearmTimer() {
            let wake = stopSignal == nil ? scheduler.nextWakeDate : nil
            guard wake != timer?.date else { return }
            timer?.task.cancel()
            timer = nil
            guard let wake else { return }
            let clock = runner.clock
            let mailbox = runner.mailbox
            // Unstructured so it can be cancelled and replaced when an earlier date comes
            // along; it only posts a message, never touches state.
            let task = Task {
                do {
                    try await clock.sleep(until: wake)
                    mailbox.yield(.wake)
                } catch {}
            }
            timer = (wake, task)
        }

        /// Waits for cancelled constraint commands to end.
        func finishSideTasks() async {
            timer?.task.cancel()
            for (_, task) in sideTasks {
                task.cancel()
                await task.value
            }
        }
    }
}
