import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// A large `jobs:` map is parsed in parts at once (issue 13): the jobs and every problem must be
/// what one pass over the file gives, in the same order, the first 50 per file included.
@Suite struct PartedLoadingTests {
    private func load(_ text: String, parts: Int) -> JobFileLoader.Result {
        JobFileLoader.load(texts: [("jobs.yaml", text)], environment: ["HOME": "/home/x"], maxParts: parts)
    }

    /// `count` jobs in chains; with `problemEvery`, some with problems of their own and some
    /// sharing one place through an alias: problems at one place from jobs of different parts.
    private func file(jobs count: Int, problemEvery: Int? = nil) -> String {
        var text =
            "x-shared: &shared\n  bogus: 1\n  run: echo shared\npipelines:\n  p: { maxConcurrent: 2 }\njobs:\n"
        for index in 0..<count {
            text += "  job-\(index):\n"
            if let problemEvery, index % problemEvery == 0 {
                text += "    <<: *shared\n"
            } else if let problemEvery, index % problemEvery == 1 {
                text += "    run: echo ${HOME}\n    priority: high\n"
            } else {
                text += "    run: echo \(index)\n    pipeline: p\n    env: { A: \"${HOME}\" }\n"
            }
            if index % 10 != 0 { text += "    needs: [job-\(index - 1), job-\(index - 1)]\n" }
        }
        return text
    }

    @Test func aLargeFileWithProblemsGivesInPartsWhatOnePassGives() {
        let text = file(jobs: 3 * JobFileParser.jobsPerPart, problemEvery: 97)
        let one = load(text, parts: 1)
        #expect(one.diagnostics.count == 51, "50 listed and the line that counts the rest")
        #expect(one.workload == nil)
        for parts in [2, 3] {
            let parted = load(text, parts: parts)
            #expect(parted.diagnostics == one.diagnostics)
            #expect(parted.jobsAsRead.jobs == one.jobsAsRead.jobs)
        }
    }

    /// What a command loads with: parts of ``JobFileParser/jobsPerPart`` entries in a task group,
    /// joined as they end, whatever order they end in.
    @Test func partsParsedAtOnceGiveWhatOnePassGives() async {
        for text in [
            file(jobs: 3 * JobFileParser.jobsPerPart, problemEvery: 97),
            file(jobs: 3 * JobFileParser.jobsPerPart + 7),
        ] {
            let one = load(text, parts: 1)
            let atOnce = await JobFileLoader.loadConcurrently(
                texts: [("jobs.yaml", text)], environment: ["HOME": "/home/x"], maxParts: nil)
            #expect(atOnce.diagnostics == one.diagnostics)
            #expect(atOnce.jobsAsRead.jobs == one.jobsAsRead.jobs)
            #expect((atOnce.workload == nil) == (one.workload == nil))
        }
    }

    @Test func aLargeValidFileGivesInPartsWhatOnePassGives() {
        let text = file(jobs: 2 * JobFileParser.jobsPerPart + 5)
        let one = load(text, parts: 1)
        #expect(one.diagnostics.isEmpty)
        let parted = load(text, parts: 2)
        #expect(parted.diagnostics.isEmpty)
        #expect(parted.workload?.jobs == one.workload?.jobs)
        #expect(parted.workload?.jobs.count == 2 * JobFileParser.jobsPerPart + 5)
        #expect(parted.workload?.order(of: "job-8196") == 8196)
        #expect(parted.workload?.job("job-3")?.needs == ["job-2"])
        #expect(parted.workload?.job("job-3")?.environment == ["A": "/home/x"])
    }

    @Test func aFewProblemsAtOnePlaceKeepTheOrderOfTheirJobs() {
        // Every job merges the same map, so each job's problem (one that names the job) stands
        // at that map's `cron` key.
        var text = "x-shared: &shared\n  every: 1m\n  cron: '@daily'\n  run: echo\njobs:\n"
        for index in 0..<(2 * JobFileParser.jobsPerPart) where index % 200 == 0 {
            text += "  j\(index): { <<: *shared }\n"
        }
        for index in 0..<(2 * JobFileParser.jobsPerPart) where index % 200 != 0 {
            text += "  j\(index): { run: echo }\n"
        }
        let one = load(text, parts: 1)
        #expect(one.diagnostics.count == 41)
        #expect(load(text, parts: 2).diagnostics == one.diagnostics)
    }
}

/// The known entries of a map, by key (``Known``).
@Suite struct KnownEntriesTests {
    private func entry(_ key: String, _ node: Int) -> Entry {
        Entry(key: key, keyNode: YAMLTree.Node(index: node), value: YAMLTree.Node(index: node + 1))
    }

    @Test func entriesAreFoundByKeyWhateverTheOrderTheyWereSetIn() {
        var known = Known<JobKey>()
        #expect(known.isEmpty)
        known[.when] = entry("when", 0)
        known[.run] = entry("run", 2)
        known[.needs] = entry("needs", 4)
        #expect(known[.run]?.keyNode.index == 2)
        #expect(known[.needs]?.keyNode.index == 4)
        #expect(known[.when]?.keyNode.index == 0)
        #expect(known[.plugin] == nil)
        #expect(known.has(.needs) && !known.has(.plugin))
        known[.needs] = entry("needs", 6)
        #expect(known[.needs]?.keyNode.index == 6)
        known[.needs] = nil
        #expect(known[.needs] == nil && !known.has(.needs))
        #expect(known[.when]?.keyNode.index == 0 && known[.run]?.keyNode.index == 2)
    }

    @Test func ownEntriesWinOverTheDefaultsAndTheRestComeFromThem() {
        var defaults = Known<JobKey>()
        defaults[.retry] = entry("retry", 0)
        defaults[.timeout] = entry("timeout", 2)
        defaults[.allowFailure] = entry("allowFailure", 4)
        var own = Known<JobKey>()
        own[.timeout] = entry("timeout", 10)
        own[.run] = entry("run", 12)
        let merged = own.over(defaults)
        #expect(merged[.run]?.keyNode.index == 12)
        #expect(merged[.timeout]?.keyNode.index == 10)
        #expect(merged[.retry]?.keyNode.index == 0)
        #expect(merged[.allowFailure]?.keyNode.index == 4)
        #expect(merged[.plugin] == nil)
        #expect(Known<JobKey>().over(defaults)[.retry]?.keyNode.index == 0)
        #expect(own.over(Known())[.run]?.keyNode.index == 12)
    }

    @Test func keysAreLookedUpByTheirExactNames() {
        for (number, name) in JobKey.names.enumerated() {
            #expect(JobKey.byName[name] == JobKey(rawValue: number))
        }
        #expect(JobKey.byName["Run"] == nil)
        #expect(JobKey.byName["runs"] == nil)
        #expect(JobKey.byName[""] == nil)
        #expect(JobKey.byName["requiresInternetX"] == nil)
        #expect(RetryKey.byName["maxElapsed"] == .maxElapsed)
    }

    @Test func nullIsReadByTheSpellingsOfTheCoreSchema() throws {
        let values = [
            "~", "null", "Null", "NULL", "", "nULL", "NUll", "nul", "'null'", "\"~\"", "none", "nulls",
        ]
        let text = values.enumerated().map { "k\($0.offset): \($0.element)\n" }.joined()
        let composed = try YAMLComposer.compose(text).get()
        let tree = composed.tree
        let root = try #require(composed.root)
        let nulls = tree.pairs(root).map { tree.isPlainNull($0.value) }
        #expect(nulls == [true, true, true, true, true, false, false, false, false, false, false, false])
    }
}
