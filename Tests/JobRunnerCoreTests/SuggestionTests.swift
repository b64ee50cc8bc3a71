import Testing

@testable import JobRunnerCore

/// "Did you mean": a swap of two neighbouring characters is one edit, and an operator command
/// with no id close enough lists the ids it could have meant.
@Suite struct SuggestionTests {
    @Test func aSwapOfTwoNeighbouringCharactersIsOneEdit() {
        // `retry bda` for `bad`: two edits counted apart, beyond the one a short name allows.
        #expect(Suggestion.closest(to: "bda", in: ["bad", "build"]) == "bad")
        #expect(Suggestion.closest(to: "lnit", in: ["lint", "package"]) == "lint")
        #expect(Suggestion.closest(to: "xyz", in: ["bad"]) == nil)
    }

    @Test func withNoIdCloseEnoughTheIdsAreListed() {
        #expect(Operator.hintOrList(for: "bda", in: ["bad", "ci"]) == "; did you mean 'bad'?")
        #expect(Operator.hintOrList(for: "zzz", in: ["build", "test"]) == "; the jobs are build, test")
        let many = (1...10).map { "job\($0)" }
        #expect(Operator.hintOrList(for: "zzzzzzz", in: many).hasSuffix("job8 and 2 more"))
    }
}
