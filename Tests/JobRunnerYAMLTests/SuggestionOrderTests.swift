import Foundation
import JobRunnerYAML
import Testing

/// "did you mean" names the same word every time: among equally close declared constraints or
/// pipelines (read from a table in no fixed order), the first by name.
@Suite struct SuggestionOrderTests {
    @Test func equallyCloseNamesAreSuggestedInNameOrder() {
        let names = (2...9).map { "\($0)" }
        let text =
            "pipelines:\n" + names.map { "  p\($0): {}\n" }.joined() + "constraints:\n"
            + names.map { "  c\($0): { check: \"true\" }\n" }.joined()
            + "jobs:\n  a:\n    run: \"true\"\n    pipeline: p1\n    constraints: [c1]\n"
        let messages = JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:]).diagnostics.map(
            \.description)
        #expect(messages.contains { $0.hasSuffix("did you mean 'p2'?") }, "\(messages)")
        #expect(messages.contains { $0.hasSuffix("did you mean 'c2'?") }, "\(messages)")
    }

    /// A key the map already has is seldom what a typo meant: `ron:` beside `run:` is `cron`
    /// (`run` is as near), and `rn:` beside `on:` in a notify hook is `run`; a written key is
    /// suggested only when no other is near (`job:` beside `jobs:`, in the broken fixtures).
    @Test func aKeyAlreadyWrittenIsSuggestedOnlyWhenNoOtherIsNear() {
        let text =
            "notify:\n  mail:\n    on: [failure]\n    rn: ./notify.sh\n"
            + "jobs:\n  a:\n    run: \"true\"\n    ron: \"* * * * *\"\n"
        let messages = JobFileLoader.load(texts: [("jobs.yaml", text)], environment: [:]).diagnostics.map(
            \.description)
        #expect(
            messages.contains {
                $0.hasPrefix("jobs.yaml:4:5: error: unknown key 'rn'") && $0.hasSuffix("did you mean 'run'?")
            },
            "\(messages)")
        #expect(
            messages.contains {
                $0.hasPrefix("jobs.yaml:8:5: error: unknown key 'ron'")
                    && $0.hasSuffix("did you mean 'cron'?")
            },
            "\(messages)")
    }
}
