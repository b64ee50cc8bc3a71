import JobRunnerCore
import Testing

/// A run holds one `JobDefinition` per job: its rarely set values are boxed and its plugin
/// places kept as lines and columns, and it must still behave as a plain value.
@Suite struct JobDefinitionLayoutTests {
    let file = "/jobs/a.yaml"

    func plain(_ id: String = "a") -> JobDefinition {
        JobDefinition(
            id: id, handler: .plugin(plugin: "noop", handler: "ok"),
            location: SourceLocation(file: file, line: 3, column: 3))
    }

    @Test func staysSmall() {
        // 472 bytes before the rare values were boxed.
        #expect(MemoryLayout<JobDefinition>.stride <= 200)
    }

    @Test func changingACopysBoxedValuesLeavesTheOriginal() {
        let original = plain()
        var copy = original
        copy.retry.attempts = 5
        copy.timeout = .seconds(9)
        copy.killGrace = .seconds(1)
        copy.schedule = .every(.seconds(60))
        copy.catchUp = .all
        copy.overlap = .queue
        #expect(original.retry == RetryPolicy())
        #expect(original.timeout == nil)
        #expect(original.killGrace == JobDefinition.defaultKillGrace)
        #expect(original.schedule == nil)
        #expect(original.catchUp == .latest)
        #expect(original.overlap == .skip)
        #expect(copy.retry.attempts == 5)
        #expect(copy.timeout == .seconds(9))
        #expect(copy.schedule == .every(.seconds(60)))
        #expect(copy != original)

        // And the other way round: a copy of a changed job is not changed by its original.
        var changed = copy
        let second = changed
        changed.retry.attempts = 7
        #expect(second.retry.attempts == 5)
        #expect(changed.retry.attempts == 7)
    }

    @Test func equalValuesAreEqualHoweverTheyWereReached() {
        var changedBack = plain()
        changedBack.retry.attempts = 3
        changedBack.retry.attempts = 1
        changedBack.timeout = .seconds(1)
        changedBack.timeout = nil
        #expect(changedBack == plain())
        #expect(changedBack.hashValue == plain().hashValue)

        let viaInit = JobDefinition(
            id: "a", handler: .plugin(plugin: "noop", handler: "ok"), retry: RetryPolicy(attempts: 2),
            location: SourceLocation(file: file, line: 3, column: 3))
        var viaSetter = plain()
        viaSetter.retry = RetryPolicy(attempts: 2)
        #expect(viaInit == viaSetter)
        #expect(Set([viaInit, viaSetter]).count == 1)
    }

    @Test func pluginPlacesComeBackAsSet() {
        var job = plain()
        #expect(job.pluginLocations == nil)
        let inFile = PluginLocations(
            plugin: SourceLocation(file: file, line: 4, column: 13),
            parameters: SourceLocation(file: file, line: 5, column: 11))
        job.pluginLocations = inFile
        #expect(job.pluginLocations == inFile)
        // Places in another file, or that lines and columns of a file cannot name, are kept too.
        let elsewhere = PluginLocations(plugin: SourceLocation(file: "/other.yaml", line: 1, column: 1))
        job.pluginLocations = elsewhere
        #expect(job.pluginLocations == elsewhere)
        let odd = PluginLocations(
            plugin: SourceLocation(file: file, line: 0, column: -1),
            parameters: SourceLocation(file: file, line: Int(UInt32.max) + 1, column: 1))
        job.pluginLocations = odd
        #expect(job.pluginLocations == odd)
        job.pluginLocations = nil
        #expect(job.pluginLocations == nil)
        #expect(job == plain())
    }

    @Test func movingAJobToAnotherFileKeepsItsPluginPlaces() {
        var job = plain()
        let places = PluginLocations(plugin: SourceLocation(file: file, line: 4, column: 13))
        job.pluginLocations = places
        let before = job
        job.location = SourceLocation(file: "/moved.yaml", line: 3, column: 3)
        #expect(job.pluginLocations == places)
        job.location.file = file
        #expect(job.pluginLocations == places)
        #expect(job == before)
        #expect(before.pluginLocations == places)
    }
}
