import Testing

@testable import JobRunnerCore

/// The pipeline slots shared by the runs a runner works on at once, on their own.
@Suite struct SlotBoardTests {
    @Test func eachRunIsToldWhatTheOthersHoldOnceItChanged() {
        var board = SlotBoard()
        _ = board.update("main", taken: SlotsTaken(perPipeline: ["p": 2, "q": 1]), wanting: [])
        #expect(board.opening("occ") == SlotsTaken(perPipeline: ["p": 2, "q": 1]))
        #expect(board.news(for: "occ") == nil, "told at its opening")
        _ = board.update("occ", taken: SlotsTaken(perPipeline: ["q": 1]), wanting: [])
        #expect(board.total == SlotsTaken(perPipeline: ["p": 2, "q": 2]))
        #expect(board.news(for: "main") == SlotsTaken(perPipeline: ["q": 1]))
        #expect(board.news(for: "main") == nil)
        #expect(board.news(for: "occ") == nil, "what main holds did not change")
    }

    @Test func aFreedSlotWakesTheRunsWaitingForThatPipelineOrForAnySlot() {
        var board = SlotBoard()
        _ = board.update("main", taken: SlotsTaken(perPipeline: ["p": 1, "q": 1]), wanting: [])
        _ = board.update("a", taken: SlotsTaken(), wanting: ["p"])
        _ = board.update("b", taken: SlotsTaken(), wanting: ["q"])
        _ = board.update("c", taken: SlotsTaken(), wanting: [nil])
        #expect(board.update("main", taken: SlotsTaken(perPipeline: ["q": 1]), wanting: []) == ["a", "c"])
        #expect(
            board.update("main", taken: SlotsTaken(perPipeline: ["q": 1]), wanting: []) == [], "nothing freed"
        )
        board.remove("main")
        #expect(board.total == SlotsTaken())
        #expect(!board.isEmpty, "b and c still wait")
    }

    @Test func aRunLeftAloneIsToldThatNobodyElseHoldsASlot() {
        var board = SlotBoard()
        #expect(board.isEmpty)
        _ = board.update("occ", taken: SlotsTaken(perPipeline: ["p": 1]), wanting: [])
        #expect(board.news(for: "main") == SlotsTaken(perPipeline: ["p": 1]))
        _ = board.update("occ", taken: SlotsTaken(), wanting: [])
        board.remove("occ")
        #expect(!board.isEmpty, "main was told of a slot held: it must hear that it is free")
        #expect(board.news(for: "main") == SlotsTaken())
    }
}
