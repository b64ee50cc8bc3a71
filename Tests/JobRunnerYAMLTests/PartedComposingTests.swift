import Foundation
import Testing

@testable import JobRunnerYAML

/// A large file is composed in pieces at once (issue 13): the joined tree must be the tree of
/// the whole, and a file the pieces cannot be sure of must give what composing it whole gives.
@Suite struct PartedComposingTests {
    /// Enough jobs that the file is cut: each job's keys come from `body`.
    private func file(
        head: String = "pipelines:\n  p: { maxConcurrent: 2 }\njobs:\n", indent: String = "  ",
        tail: String = "", jobs count: Int = 9000, body: (Int) -> String = { "    run: echo \($0)\n" }
    ) -> String {
        var text = head
        for index in 0..<count {
            text += "\(indent)job-\(index):\n" + body(index)
            if index % 10 != 0 { text += "\(indent)  needs: [job-\(index - 1)]\n" }
        }
        return text + tail
    }

    /// Whether two nodes of two trees are the same: kind, style, tag, place, text and children.
    private func same(_ a: YAMLTree, _ x: YAMLTree.Node, _ b: YAMLTree, _ y: YAMLTree.Node) -> Bool {
        let left = a.records[x.index]
        let right = b.records[y.index]
        func tag(_ tree: YAMLTree, _ number: UInt16) -> String? {
            number == 0 ? nil : tree.tags[Int(number) - 1]
        }
        guard left.kind == right.kind, left.plain == right.plain, left.line == right.line,
            left.column == right.column, tag(a, left.tag) == tag(b, right.tag)
        else { return false }
        switch left.kind {
        case .scalar:
            return a.text(x) == b.text(y)
        case .sequence:
            let (l, r) = (a.items(x), b.items(y))
            return l.count == r.count && zip(l, r).allSatisfy { same(a, $0, b, $1) }
        case .mapping:
            let (l, r) = (a.pairs(x), b.pairs(y))
            return l.count == r.count
                && zip(l, r).allSatisfy { same(a, $0.key, b, $1.key) && same(a, $0.value, b, $1.value) }
        }
    }

    private func expectSameAsWhole(
        _ text: String, cut: Bool, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        #expect((PartedText(text) != nil) == cut, sourceLocation: sourceLocation)
        let whole = YAMLComposer.compose(text)
        let parted = await YAMLComposer.composeConcurrently(text)
        switch (whole, parted) {
        case (.success(let one), .success(let other)):
            let (x, y) = try (#require(one.root), #require(other.root))
            #expect(same(one.tree, x, other.tree, y), sourceLocation: sourceLocation)
            #expect(one.tree.depth == other.tree.depth, sourceLocation: sourceLocation)
        case (.failure(let one), .failure(let other)):
            #expect(one == other, sourceLocation: sourceLocation)
        default:
            Issue.record("composed whole: \(whole), in pieces: \(parted)", sourceLocation: sourceLocation)
        }
    }

    @Test func aLargeFileInPiecesIsTheWholeFile() async throws {
        try await expectSameAsWhole(file(), cut: true)
        // Keys after the jobs, comments, blank lines, tags, block and quoted scalars, flow
        // collections, quoted ids, and entries indented by four.
        try await expectSameAsWhole(
            file(
                head: "# jobs\nversion: 1\njobs:   # all of them\n\n",
                tail: "# end\nsecrets: [TOKEN]\nx-note: !!str 1\n",
                body: { index in
                    switch index % 5 {
                    case 0: "    run: |\n      echo \(index)\n\n      echo done\n# a comment at the margin\n"
                    case 1: "    run: \"echo \\\"\(index)\\\"\"\n    priority: !!int \(index)\n"
                    case 2: "    run: [sh, -c, 'echo \(index)']\n    env: {A: '1', B: \"2\"}\n"
                    case 3: "    run: >-\n      echo\n      \(index)\n    x-notes: { a: [1, 2, {b: c}] }\n"
                    default: "    run: echo plain\n      continued\n"
                    }
                }), cut: true)
        try await expectSameAsWhole(file(indent: "    ", body: { "      run: echo \($0)\n" }), cut: true)
        try await expectSameAsWhole(
            file(body: { $0 % 7 == 0 ? "    \"quoted\($0)\": 1\n    run: x\n" : "    run: echo \($0)\n" }),
            cut: true)
    }

    @Test func aFileThePiecesCannotBeSureOfIsComposedWhole() async throws {
        // Anchors and aliases, other line breaks, a byte order mark, document markers, and a
        // `jobs:` with a value on its line.
        try await expectSameAsWhole(file(head: "x-a: &a {run: echo}\njobs:\n"), cut: false)
        try await expectSameAsWhole(file().replacingOccurrences(of: "\n", with: "\r\n"), cut: false)
        try await expectSameAsWhole("\u{FEFF}" + file(), cut: false)
        try await expectSameAsWhole("---\n" + file(), cut: false)
        try await expectSameAsWhole(file(head: "jobs: !!map\n"), cut: false)
        let padding = "x-pad: \(String(repeating: "y", count: 600_000))\n"
        try await expectSameAsWhole(
            file(head: "jobs:\n  # only comments\n", tail: padding, jobs: 0), cut: false)
    }

    @Test func problemsAreThoseOfTheWholeFile() async throws {
        // A job id repeated in another piece, `jobs:` declared twice, a quote left open across
        // a cut, a syntax error deep inside, and a key after the jobs repeated before them.
        try await expectSameAsWhole(file(tail: "  job-3:\n    run: again\n"), cut: true)
        try await expectSameAsWhole(file(tail: "jobs:\n  other: {run: x}\n"), cut: true)
        try await expectSameAsWhole(file(head: "version: 1\njobs:\n", tail: "version: 2\n"), cut: true)
        try await expectSameAsWhole(
            file(body: { $0 == 4500 ? "    run: \"echo\n" : "    run: echo \($0)\n" }), cut: true)
        try await expectSameAsWhole(
            file(body: { $0 == 6000 ? "    run: [a, b\n" : "    run: echo \($0)\n" }), cut: true)
        try await expectSameAsWhole(
            file(body: { $0 == 7000 ? "    run: echo\n   bad: indent\n" : "    run: echo \($0)\n" }),
            cut: true)
        try await expectSameAsWhole(
            file(body: { $0 == 100 ? "    run: a\n    run: b\n" : "    run: echo \($0)\n" }), cut: true)
        // Nesting near libyaml's limit: a piece is one level less deep than the whole.
        let deep = String(repeating: "[", count: 999) + String(repeating: "]", count: 999)
        try await expectSameAsWhole(
            file(body: { $0 == 5000 ? "    x-deep: \(deep)\n" : "    run: x\n" }), cut: true)
    }
}
