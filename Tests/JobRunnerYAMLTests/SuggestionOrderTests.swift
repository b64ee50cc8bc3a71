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
}
