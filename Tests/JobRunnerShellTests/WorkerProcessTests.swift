import Foundation
import JobRunnerCore
import JobRunnerShell
import JobRunnerTesting
import Testing

/// A long-lived worker process spoken to in frames: `cat` answers each frame with itself.
struct WorkerProcessTests {
    static func start(_ program: String, _ arguments: [String] = [], clock: ManualClock = ManualClock())
        async throws -> WorkerProcess
    {
        try await WorkerProcess.start(program: program, arguments: arguments, clock: clock).get()
    }

    @Test func exchangesFramesOneAfterAnother() async throws {
        let worker = try await Self.start("/bin/cat")
        for size in [0, 3, 100_000] {
            let frame = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
            #expect(
                await worker.exchange(frame, deadline: nil, teardown: Teardown(killGrace: .zero))
                    == .reply(frame))
        }
        worker.stop()
        #expect(await worker.termination == .exited(0), "cat exits when its input ends")
    }

    @Test func aWorkerThatDiesEndsTheExchangeWithHowItEnded() async throws {
        let worker = try await Self.start("/bin/sh", ["-c", "kill -SEGV $$"])
        #expect(
            await worker.exchange([1, 2], deadline: nil, teardown: Teardown(killGrace: .zero))
                == .ended(.signalled(SIGSEGV)))
    }

    @Test func theDeadlineEndsTheWorkersGroup() async throws {
        let clock = ManualClock()
        // Reads nothing, answers nothing.
        let worker = try await Self.start("/bin/sleep", ["600"], clock: clock)
        let teardown = Teardown(timeout: .seconds(5), killGrace: .zero)
        async let exchange = worker.exchange(
            [1], deadline: teardown.deadline(from: clock.now()), teardown: teardown)
        await clock.waitForSleepers()
        clock.advance(by: 5)
        #expect(await exchange == .stopped(.timedOut(after: .seconds(5))))
        let ended = await worker.termination
        #expect(ended == .signalled(SIGTERM) || ended == .signalled(SIGKILL), "\(ended)")
    }

    @Test func aProgramThatCannotStartSaysWhy() async {
        let started = await WorkerProcess.start(
            program: "/no/such/program", arguments: [], clock: ManualClock())
        guard case .failure(let error) = started else {
            Issue.record("started \(started)")
            return
        }
        #expect(!error.reason.isEmpty)
    }
}
