import Foundation
import Glibc
import JobRunnerCore
import JobRunnerTesting
import Testing

@testable import JobRunnerShell

/// The child-process runner on its own. Time that matters (deadlines, grace periods) runs on a
/// manual clock; the tests wait for the runner to be asleep on it, never for a while. The time
/// limit turns a runner that never sleeps where it should (a wait that would hang) into a failure.
/// A child that must still run when the test acts sleeps 600 s, past that limit: a loaded machine
/// can keep a test from acting for a minute, and a `sleep 60` would then end by itself.
@Suite(.timeLimit(.minutes(5))) struct ChildProcessTests {
    func shell(
        _ command: String, timeout: Duration? = nil, killGrace: Duration = .seconds(5),
        clock: any RunnerClock = ManualClock(), output: ChildProcess.Output = .keep(lastBytes: .max)
    ) -> ChildProcess {
        ChildProcess(
            program: .path("/bin/sh"), arguments: ["-c", command], output: output,
            teardown: Teardown(timeout: timeout, killGrace: killGrace), clock: clock)
    }

    @Test func anExitIsAResultWithItsCodeAndOutput() async {
        let outcome = await shell("echo out; echo err >&2; exit 3").run()
        #expect(outcome.termination == .exited(3))
        #expect(String(decoding: outcome.output, as: UTF8.self) == "out\nerr\n")
        #expect(await shell("true").run().termination == .exited(0))
    }

    @Test func aSignalThatEndsTheProcessIsAResult() async {
        #expect(await shell("kill -KILL $$").run().termination == .signalled(SIGKILL))
    }

    @Test func inputGoesInAndStandardErrorMayGoToAFileOfItsOwn() async throws {
        let scratch = try Scratch()
        let errors = scratch.path + "/logs/call.err"
        let child = ChildProcess(
            program: .name("sh"), arguments: ["-c", "cat; echo oops >&2"], input: Array("request".utf8),
            errors: .appendToFile(errors), clock: ManualClock())
        let outcome = await child.run()
        #expect(outcome.termination == .exited(0))
        #expect(outcome.output == Array("request".utf8), "standard error is not mixed in")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "oops\n")
    }

    @Test func onlyTheLastBytesAreKeptWhenAskedTo() async {
        let outcome = await shell("seq 1 10000", output: .keep(lastBytes: 11)).run()
        #expect(String(decoding: outcome.output, as: UTF8.self) == "9999\n10000\n")
    }

    @Test func aMissingProgramFailsToStart() async {
        let byName = await ChildProcess(program: .name("no-such-program-xyz"), clock: ManualClock()).run()
        guard case .failedToStart = byName.termination else {
            Issue.record("expected failedToStart, got \(byName.termination)")
            return
        }
        let byPath = await ChildProcess(program: .path("/no/such/program"), clock: ManualClock()).run()
        guard case .failedToStart = byPath.termination else {
            Issue.record("expected failedToStart, got \(byPath.termination)")
            return
        }
    }

    @Test func theDeadlineEndsAProcessThatIgnoresSigtermOnlyAfterTheGrace() async throws {
        let clock = ManualClock()
        let box = PIDBox()
        let ready = OutputWatch()
        // `trap '' TERM` is inherited by the sleep: no process of the group heeds SIGTERM.
        let child = shell(
            "trap '' TERM; echo ready; sleep 600", timeout: .seconds(10), killGrace: .seconds(5),
            clock: clock, output: .stream { ready.append($0) })
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        let group = await box.spawned()
        await ready.wait(for: "ready")
        await clock.waitForSleepers()
        clock.advance(by: 10)
        // SIGTERM has gone out and the grace period is being waited for on the clock.
        await clock.waitForSleepers()
        #expect(ProcessGroups.isAlive(group: group), "nothing is killed before the grace period is over")
        clock.advance(by: 5)
        let outcome = await run.value
        #expect(outcome.termination == .stopped(.timedOut(after: .seconds(10))))
        #expect(!ProcessGroups.isAlive(group: group))
    }

    @Test func theDeadlineAlsoWorksOnTheRealClock() async {
        let box = PIDBox()
        let outcome = await shell(
            "trap '' TERM; sleep 30 & wait", timeout: .milliseconds(100), killGrace: .milliseconds(100),
            clock: SystemClock()
        ).run(onSpawn: { box.set($0) })
        #expect(outcome.termination == .stopped(.timedOut(after: .milliseconds(100))))
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func aProcessStoppedByThePolicyEndsAsStoppedElseAsItEnded() {
        // The policy's watch decides (TeardownTests step it); the process's own end counts only
        // when it finished first.
        let ended = ChildProcess.Ended(status: .exited(3), output: [])
        #expect(ChildProcess.termination(of: ended, watched: .finished(())) == .exited(3))
        let killed = ChildProcess.Ended(status: .signalled(9), output: [])
        #expect(ChildProcess.termination(of: killed, watched: .finished(())) == .signalled(9))
        #expect(
            ChildProcess.termination(of: killed, watched: .stopped(.timedOut(after: .seconds(1))))
                == .stopped(.timedOut(after: .seconds(1))))
        #expect(
            ChildProcess.termination(of: ended, watched: .stopped(.interrupted)) == .stopped(.interrupted))
    }

    @Test func aZeroGraceKillsAtOnce() async {
        let clock = ManualClock()
        let box = PIDBox()
        let ready = OutputWatch()
        let child = shell(
            "trap '' TERM; echo ready; sleep 600", timeout: .seconds(1), killGrace: .zero, clock: clock,
            output: .stream { ready.append($0) })
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        await ready.wait(for: "ready")
        await clock.waitForSleepers()
        clock.advance(by: 1)
        #expect(await run.value.termination == .stopped(.timedOut(after: .seconds(1))))
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func cancellationInterruptsAndEndsTheGroup() async {
        let box = PIDBox()
        let child = shell("sleep 600 & sleep 600", timeout: .seconds(600))
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        let group = await box.spawned()
        run.cancel()
        #expect(await run.value.termination == .stopped(.interrupted))
        #expect(!ProcessGroups.isAlive(group: group))
    }

    @Test func cancellationWaitsOutTheGraceForAProcessThatIgnoresSigterm() async {
        let clock = ManualClock()
        let box = PIDBox()
        let ready = OutputWatch()
        let child = shell(
            "trap '' TERM; echo ready; sleep 600", clock: clock, output: .stream { ready.append($0) })
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        await ready.wait(for: "ready")
        run.cancel()
        await clock.waitForSleepers()
        #expect(ProcessGroups.isAlive(group: box.pid))
        clock.advance(by: 5)
        #expect(await run.value.termination == .stopped(.interrupted))
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func aCancelledCallerStartsNothing() async {
        let box = PIDBox()
        let slots = ChildSlots(capacity: 1)
        let run = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await shell("exit 0").run(in: slots, onSpawn: { box.set($0) })
        }
        #expect(await run.value.termination == .stopped(.interrupted))
        #expect(box.pid == 0, "no process was started")
    }

    @Test func leftoversAreSweptWhenTheMainProcessExits() async {
        let box = PIDBox()
        let outcome = await shell("sleep 60 >/dev/null 2>&1 & echo done").run(onSpawn: { box.set($0) })
        #expect(outcome.termination == .exited(0))
        #expect(String(decoding: outcome.output, as: UTF8.self) == "done\n")
        #expect(!ProcessGroups.isAlive(group: box.pid))
    }

    @Test func leftoversThatIgnoreSigtermGetTheGraceThenSigkill() async {
        let clock = ManualClock()
        let box = PIDBox()
        let child = shell("trap '' TERM; sleep 600 >/dev/null 2>&1 & echo done", clock: clock)
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        let group = await box.spawned()
        // The main process has exited; the sweep waits out the grace on the clock.
        await clock.waitForSleepers()
        #expect(ProcessGroups.isAlive(group: group))
        clock.advance(by: 5)
        #expect(await run.value.termination == .exited(0), "the main process's own exit is the result")
        #expect(!ProcessGroups.isAlive(group: group))
    }

    /// A satisfy record without a start time (its runner died before adding it) cannot tell the
    /// satisfy from a process that took its pid since: a live group under that pid is left
    /// alone; with the start time recorded, the group is ended.
    @Test func aLiveGroupIsNotEndedOnASatisfyRecordWithoutAStartTime() async {
        let box = PIDBox()
        let child = shell("sleep 600", clock: SystemClock())
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        let group = await box.spawned()
        let groups = ProcessGroups(clock: SystemClock(), killGrace: .seconds(5))
        await groups.terminate(SatisfyProcess(pid: group, startTime: nil))
        #expect(ProcessGroups.isAlive(group: group), "an unverifiable record ends nothing")
        await groups.terminate(SatisfyProcess(pid: group, startTime: groups.startTime(of: group)))
        #expect(await run.value.termination == .signalled(SIGTERM), "the recorded process is ended")
    }

    /// The satisfy's shell records its own pid and start time before the command runs: a runner
    /// killed right after the spawn, before it could add anything, leaves a record the next
    /// runner can check (it once held `PID -`, which ends nothing, and a satisfy ran beside the
    /// next runner's own).
    @Test func aSatisfysShellRecordsItsOwnStartTimeBeforeItsCommandRuns() async throws {
        let record = FileManager.default.temporaryDirectory.appendingPathComponent("satisfy-\(UUID()).pid")
            .path
        defer { try? FileManager.default.removeItem(atPath: record) }
        let box = PIDBox()
        // The command prints the record as it finds it, then its own /proc/PID/stat.
        let outcome = await ChildProcess.shortCommand(
            "cat '\(record)'; cat /proc/$$/stat", in: nil, limit: .seconds(900), clock: SystemClock(),
            recordingPIDIn: record
        ).run(onSpawn: { box.set($0) })
        let pid = await box.spawned()
        let lines = String(decoding: outcome.output, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        let recorded = try #require(SatisfyProcess(recorded: String(lines.first ?? "")))
        let stat = try #require(lines.last?.split(separator: ")").last?.split(separator: " "))
        #expect(recorded.pid == pid)
        let started = stat.count > 19 ? UInt64(stat[19]) : nil
        #expect(recorded.startTime != nil)
        #expect(recorded.startTime == started, "the shell's start time, which exec keeps")
    }

    @Test func orphanTerminationUsesTheSameGraceOnTheClock() async {
        let clock = ManualClock()
        let box = PIDBox()
        let ready = OutputWatch()
        let child = shell(
            "trap '' TERM; echo ready; sleep 600", clock: clock, output: .stream { ready.append($0) })
        let run = Task { await child.run(onSpawn: { box.set($0) }) }
        let group = await box.spawned()
        await ready.wait(for: "ready")
        let terminator = ProcessGroups(clock: clock, killGrace: .seconds(3))
        let terminating = Task {
            await terminator.terminate(Orphan(runID: "r", jobID: "j", attempt: 1, pid: group))
        }
        await clock.waitForSleepers()
        #expect(ProcessGroups.isAlive(group: group))
        clock.advance(by: 3)
        await terminating.value
        #expect(await run.value.termination == .signalled(SIGKILL))
        #expect(!ProcessGroups.isAlive(group: group))
    }
}

/// Collects a child's streamed output; `wait(for:)` returns once a text has appeared in it.
final class OutputWatch: Sendable {
    private struct State {
        var text = ""
        var waiters: [(text: String, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    func append(_ bytes: UnsafeRawBufferPointer) {
        let chunk = String(decoding: bytes, as: UTF8.self)
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.text += chunk
            let text = state.text
            let ready = state.waiters.filter { text.contains($0.text) }.map(\.continuation)
            state.waiters.removeAll { text.contains($0.text) }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    func wait(for text: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let seen = state.withLock { state -> Bool in
                if state.text.contains(text) { return true }
                state.waiters.append((text, continuation))
                return false
            }
            if seen { continuation.resume() }
        }
    }
}
