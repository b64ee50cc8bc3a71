import JobRunnerCore
import JobRunnerPluginHost
import Testing

@testable import JobRunnerCLI

@Suite struct PluginThreadsTests {
    @Test func theEnvironmentSetsTheCountElseTwiceTheCoresAtLeastFour() {
        #expect(PluginThreads.count(environment: [:], activeProcessors: 1) == 4)
        #expect(PluginThreads.count(environment: [:], activeProcessors: 8) == 16)
        #expect(PluginThreads.count(environment: ["JOBRUNNER_PLUGIN_THREADS": "3"], activeProcessors: 8) == 3)
        #expect(PluginThreads.count(environment: ["JOBRUNNER_PLUGIN_THREADS": "0"], activeProcessors: 8) == 1)
        #expect(
            PluginThreads.count(environment: ["JOBRUNNER_PLUGIN_THREADS": "-5"], activeProcessors: 8) == 1)
        #expect(
            PluginThreads.count(environment: ["JOBRUNNER_PLUGIN_THREADS": "many"], activeProcessors: 2) == 4)
    }

    /// A run's threads take work until the run stops them; after that a call is turned away at
    /// once, not left waiting.
    @Test func stoppedThreadsTurnCallsAway() async {
        let threads = PluginThreads(environment: ["JOBRUNNER_PLUGIN_THREADS": "2"])
        #expect(threads.pool.count == 2)
        let ran = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            threads.pool.submit { running in continuation.resume(returning: running) }
        }
        #expect(ran)
        threads.stop()
        let later = Locked<Bool?>(nil)
        threads.pool.submit { running in later.withLock { $0 = running } }
        #expect(later.withLock { $0 } == false)
    }
}
