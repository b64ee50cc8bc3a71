import Foundation
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// How a job file's YAML becomes a tree (``YAMLComposer``): what it reports, and where, for
/// every kind of text that is not plain maps of plain words (issue 13). The messages and places
/// are those the loader gave when Yams composed the files.
@Suite struct ComposingTests {
    private func messages(_ text: String) -> [String] {
        JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:]).diagnostics.map(\.description)
    }

    /// The two lines of a key repeated in one map: at its first place, and at the repeat.
    private func duplicate(_ key: String, first: String, again: String) -> [String] {
        let text = "duplicate key \(key) in one map: each key (and each job id) may appear only once; "
        return [
            "jobs.yaml:\(first): error: \(text)it is repeated at jobs.yaml:\(again); rename or remove the repeat",
            "jobs.yaml:\(again): error: \(text)it is also defined at jobs.yaml:\(first); rename or remove the repeat",
        ]
    }

    // MARK: Duplicate keys

    @Test func aDuplicateKeyDeepInAValueIsReportedAtBothPlaces() {
        #expect(
            messages("jobs:\n  a:\n    run: x\n    with:\n      deep: { k: 1, k: 2 }\n")
                == duplicate("'k'", first: "5:15", again: "5:21"))
    }

    @Test func severalDuplicateKeysOfOneMapAreEachReportedAtBothPlaces() {
        let run = duplicate("'run'", first: "3:5", again: "5:5")
        let timeout = duplicate("'timeout'", first: "4:5", again: "7:5")
        #expect(
            messages(
                "jobs:\n  a:\n    run: x\n    timeout: 1s\n    run: y\n    priority: 1\n    timeout: 2s\n")
                == [run[0], timeout[0], run[1], timeout[1]])
    }

    @Test func aQuotedKeyRepeatsThePlainOne() {
        #expect(
            messages("jobs:\n  a: { run: x }\n  \"a\": { run: y }\n")
                == duplicate("'a'", first: "2:3", again: "3:3"))
    }

    @Test func keysThatAreTheSameTextInUnicodeRepeatEachOther() {
        // é as one character, then as e and a combining accent.
        #expect(
            messages("jobs:\n  \u{E9}: { run: x }\n  e\u{301}: { run: y }\n")
                == duplicate("'\u{E9}'", first: "2:3", again: "3:3"))
    }

    /// Many keys are first told apart by their bytes' hashes; those are only the same text in
    /// Unicode when they are ASCII, so the others are still compared as text.
    @Test func aRepeatAmongManyKeysIsFoundWhenItsTextIsNotASCII() {
        var text = "jobs:\n  \u{E9}: { run: x }\n"
        for index in 0..<40 { text += "  j\(index): { run: x }\n" }
        text += "  e\u{301}: { run: y }\n"
        #expect(messages(text) == duplicate("'\u{E9}'", first: "2:3", again: "43:3"))
        var distinct = "jobs:\n  a: { run: x }\nx-notes:\n"
        for index in 0..<40 { distinct += "  \u{E9}\(index): \(index)\n" }
        #expect(messages(distinct).isEmpty)
    }

    @Test func aRepeatAmongManyJobsIsFound() {
        var text = "jobs:\n"
        for index in 0..<40 { text += "  j\(index): { run: x }\n" }
        text += "  j7: { run: y }\n  j3: { run: y }\n"
        let j3 = duplicate("'j3'", first: "5:3", again: "43:3")
        let j7 = duplicate("'j7'", first: "9:3", again: "42:3")
        #expect(messages(text) == [j3[0], j7[0], j7[1], j3[1]])
    }

    @Test func keysOfTheSameTextWithDifferentTagsAreReportedByTheReader() {
        #expect(
            messages("jobs:\n  a:\n    run: x\n    with: { !!int 1: a, 1: b }\n") == [
                "jobs.yaml:4:25: error: duplicate key '1' in this map (first at line 4, column 13)"
            ])
    }

    @Test func listsAndMapsAsKeysAreRefusedAndTheirRepeatsFound() {
        #expect(
            messages("jobs:\n  [a, b]: { run: x }\n  ? {c: 1}\n  : { run: y }\n") == [
                "jobs.yaml:2:3: error: keys of jobs must be plain words, not a list",
                "jobs.yaml:3:5: error: keys of jobs must be plain words, not a map",
            ])
        #expect(
            messages("jobs:\n  [a, b]: { run: x }\n  [a, b]: { run: y }\n")
                == duplicate("'<uncovertable>'", first: "2:3", again: "3:3"))
    }

    // MARK: Anchors, aliases and merge keys

    @Test func anAliasMayBeAKeyAndTheLatestAnchorOfANameWins() throws {
        let result = JobFileLoader.load(
            texts: [
                (
                    "jobs.yaml",
                    "x-a: &a build\nx-b: &a test\njobs:\n  *a : { run: x }\n  c: { run: x, needs: [*a] }\n"
                )
            ],
            environment: [:])
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.jobs.map(\.id) == ["test", "c"])
        #expect(result.workload?.job("c")?.needs == ["test"])
    }

    @Test func anUndefinedAliasIsAnError() {
        #expect(
            messages("jobs:\n  a: { run: x, needs: [*nobody] }\n") == [
                "jobs.yaml:2:24: error: invalid YAML: the alias *nobody names no anchor; define the anchor &nobody before this alias (above it in the file)"
            ])
        #expect(
            messages("x-a: &a\n  timeout: 5s\n  <<: *b\njobs:\n  a: { run: x, <<: 3 }\n") == [
                "jobs.yaml:3:7: error: invalid YAML: the alias *b names no anchor; define the anchor &b before this alias (above it in the file)"
            ])
    }

    @Test func mergeKeysFollowNestedMergesAndRefuseWhatIsNotAMap() {
        #expect(
            messages(
                "x-a: &a { timeout: 5s, priority: 2 }\nx-b: &b { <<: *a, priority: 3 }\njobs:\n  a: { run: x, <<: [*b, {enabled: false}, 7] }\n"
            ) == [
                "jobs.yaml:4:43: error: each item merged with << into job 'a' must be a map, usually an alias like *common"
            ])
        let result = JobFileLoader.load(
            texts: [
                (
                    "jobs.yaml",
                    "x-a: &a { timeout: 5s, priority: 2 }\nx-b: &b { <<: *a, priority: 3 }\njobs:\n  a: { run: x, <<: [*b, {enabled: false}] }\n"
                )
            ], environment: [:])
        let job = result.workload?.job("a")
        #expect(job?.priority == 3)
        #expect(job?.timeout == .seconds(5))
        #expect(job?.enabled == false)
    }

    @Test func aBillionLaughsIsStoppedAtTheAliasThatCrossesTheBudget() {
        var text = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
        for (name, previous) in zip(["b", "c", "d", "e", "f"], ["a", "b", "c", "d", "e"]) {
            text +=
                "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",")
                + "]\n"
        }
        #expect(
            messages(text) == [
                "jobs.yaml:6:8: error: YAML aliases here make this file stand for more than 100000 values (*e stands for 66430 values at this point, as in a 'billion laughs' file); write the values out or alias less"
            ])
    }

    @Test func theBudgetComesBeforeASecondDocumentAndBesideAnEarlierDuplicateKey() {
        let bomb =
            "x: [&a [" + String(repeating: "1,", count: 999) + "1], "
            + String(repeating: "*a, ", count: 120) + "1]\n"
        let budget =
            "YAML aliases here make this file stand for more than 100000 values (*a stands for 1001 values at this point, as in a 'billion laughs' file); write the values out or alias less"
        #expect(
            messages("jobs: { a: 1, a: 2 }\n" + bomb)
                == duplicate("'a'", first: "1:9", again: "1:15") + ["jobs.yaml:2:2407: error: \(budget)"])
        #expect(messages("jobs: {}\n---\n" + bomb) == ["jobs.yaml:3:2407: error: \(budget)"])
        #expect(
            messages("jobs: { a: 1, a: 2 }\n" + "x: [*a, *a]\n")
                == duplicate("'a'", first: "1:9", again: "1:15")
                + [
                    "jobs.yaml:2:5: error: invalid YAML: the alias *a names no anchor; define the anchor &a before this alias (above it in the file)"
                ],
            "with too few aliases, the duplicate stands")
    }

    @Test func nestingIsCappedWithAndWithoutAliases() {
        let deep = String(repeating: "[", count: 1200) + String(repeating: "]", count: 1200)
        let message = "values are nested more than 1000 levels deep; flatten this file"
        #expect(messages("jobs: " + deep + "\n") == ["jobs.yaml:1:8: error: \(message)"])
        #expect(messages("x: &a 1\ny: *a\njobs: " + deep + "\n") == ["jobs.yaml:3:8: error: \(message)"])
    }

    // MARK: Tags, documents and text

    @Test func tagsAreNotReadPlainScalarsAreTypedByTheirText() throws {
        #expect(
            messages(
                "jobs:\n  a: { run: x, priority: !!str 1, enabled: !!bool \"true\" }\n  b: { run: !!int 5 }\n"
            )
                == ["jobs.yaml:2:44: error: enabled must be true or false, not 'true'"])
        let result = JobFileLoader.load(
            texts: [
                (
                    "jobs.yaml",
                    "jobs:\n  a:\n    run: x\n    env: { A: &v \"1\", B: *v }\n    needs: !!seq [b]\n  b: !!map { run: y }\n"
                )
            ], environment: [:])
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        #expect(result.workload?.job("a")?.environment == ["A": "1", "B": "1"])
        #expect(result.workload?.job("a")?.needs == ["b"])
    }

    @Test func aSecondDocumentIsAnError() {
        #expect(
            messages("jobs:\n  a: { run: x }\n---\njobs:\n  b: { run: x }\n") == [
                "jobs.yaml:3:1: error: invalid YAML: a second document starts here; a job file holds one document: remove the '---' or split the file in two"
            ])
        #expect(messages("%YAML 1.1\n---\njobs:\n  a: { run: x }\n...\n").isEmpty)
    }

    @Test func filesWithoutJobsAreValidAndEmpty() {
        for text in ["", "# nothing\n", "---\n", "--- ~\n"] {
            let result = JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:])
            #expect(result.diagnostics.isEmpty, "\(text.debugDescription): \(result.diagnostics)")
            #expect(result.workload?.jobs.isEmpty == true)
        }
    }

    @Test func tabsAndSyntaxErrorsAreLocated() {
        #expect(
            messages("jobs:\n\ta: { run: x }\n") == [
                "jobs.yaml:2:1: error: invalid YAML: a tab indents this line; YAML is indented with spaces only: replace the tab with spaces"
            ])
        #expect(
            messages("jobs:\n  a:\n    run: x\n\t\n") == [
                "jobs.yaml:4:1: error: invalid YAML: a tab indents this line; YAML is indented with spaces only: replace the tab with spaces"
            ])
        #expect(
            messages("jobs:\n  a: { run: x }\n  b: [unclosed\n") == [
                "jobs.yaml:4:1: error: invalid YAML: did not find expected ',' or ']' while parsing a flow sequence"
            ])
        #expect(
            messages("jobs:\n  a: { run: \"x\u{1}\" }\n") == [
                "jobs.yaml:2:15: error: the control character \\x01 is not allowed in a job file; remove it (write it as an escape in a double-quoted string if a value needs it)"
            ])
    }

    @Test func filesWithAByteOrderMarkOrNotUTF8AreReadFromDisk() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("composing-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func load(_ bytes: [UInt8]) throws -> [String] {
            let path = directory.appendingPathComponent("jobs.yaml").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return JobFileLoader.load(paths: [path], environment: [:]).diagnostics.map {
                "\($0.location.line):\($0.location.column): \($0.message)"
            }
        }
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(
            try load(bom + Array("jobs:\n  a: { run: x, colour: red }\n".utf8)) == [
                "2:16: unknown key 'colour' in job 'a'"
            ])
        let bomb =
            "x: [&a [" + String(repeating: "1,", count: 999) + "1], " + String(repeating: "*a, ", count: 120)
            + "1]\n"
        #expect(
            try load(bom + Array(bomb.utf8)) == [
                "1:2407: YAML aliases here make this file stand for more than 100000 values (*a stands for 1001 values at this point, as in a 'billion laughs' file); write the values out or alias less"
            ])
        #expect(
            try load(Array("jobs:\n  a: { run: \"x".utf8) + [0xFF] + Array("\" }\n".utf8)) == [
                "1:1: this file is not UTF-8 text"
            ])
    }

    @Test func pluginValuesSplitAtTheFirstDotAsCharactersWould() {
        for text in [
            "noop.ok", "a..b", ".a", "a.", "a", "..", "e\u{301}.x", "a.\u{301}b", "users.refresh.now",
        ] {
            #expect(
                JobFileParser.pluginParts(text) == text.split(separator: ".", maxSplits: 1).map(String.init),
                "\(text.debugDescription)")
        }
    }

    // MARK: Checks across jobs

    @Test func cyclesAndUnknownNeedsAreFoundOnIndices() {
        #expect(
            messages("jobs: &j\n  a: { run: x, needs: [b] }\n  b: { run: x, needs: [a] }\n") == [
                "jobs.yaml:2:3: error: dependency cycle: a -> b -> a"
            ])
        #expect(
            messages(
                "jobs:\n  a: { run: x, needs: [b, c, a] }\n  b: { run: x, needs: [c] }\n  c: { run: x, needs: [zz] }\n"
            )
                == [
                    "jobs.yaml:2:3: error: dependency cycle: a -> a",
                    "jobs.yaml:4:24: error: job 'c' needs 'zz', which no loaded file defines",
                ])
    }

    @Test func jobsOfTheDefaultPipelineBetweenOthersNeedNoDeclaration() {
        let result = JobFileLoader.load(
            texts: [
                (
                    "jobs.yaml",
                    "pipelines: { p: {} }\njobs:\n  a: { run: x, pipeline: p }\n  b: { run: x }\n  c: { run: x, pipeline: q }\n"
                )
            ],
            environment: [:])
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:5:26: error: pipeline 'q' is not declared under 'pipelines:'; did you mean 'p'?"
            ])
    }
}
