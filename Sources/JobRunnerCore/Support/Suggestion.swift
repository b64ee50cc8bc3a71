/// Suggests the closest known word for a misspelt one ("did you mean"): case is ignored, and
/// a word qualifies within one edit for names up to 3 characters, two up to 8, three beyond. Two
/// neighbouring characters swapped count as one edit (`bda` for `bad`), as a typist makes them.
public enum Suggestion {
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let lowered = Array(word.lowercased().unicodeScalars)
        var best: (word: String, distance: Int)?
        // Reused for every candidate: one allocation per call, not per comparison.
        var scratch = Scratch()
        for candidate in candidates {
            let candidateLength = candidate.unicodeScalars.count
            let limit = candidateLength <= 3 ? 1 : (candidateLength < 9 ? 2 : 3)
            // Each edit changes the length by one at most: a word far longer or shorter cannot
            // be within the limit, and its distance is not worth computing.
            guard abs(candidateLength - lowered.count) <= limit else { continue }
            scratch.other.removeAll(keepingCapacity: true)
            scratch.other.append(contentsOf: candidate.lowercased().unicodeScalars)
            guard let distance = boundedDistance(lowered, scratch.other, limit: limit, rows: &scratch)
            else { continue }
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        return best?.word
    }

    /// The buffers one search reuses.
    private struct Scratch {
        var other: [Unicode.Scalar] = []
        var older: [Int] = []
        var previous: [Int] = []
        var current: [Int] = []
    }

    /// The edit distance of `a` and `b` when it is at most `limit`, else nil: once every cell of
    /// a row is past the limit, no later row can come back under it, and the rest is skipped.
    private static func boundedDistance(
        _ a: [Unicode.Scalar], _ b: [Unicode.Scalar], limit: Int, rows: inout Scratch
    ) -> Int? {
        if a.isEmpty { return b.count <= limit ? b.count : nil }
        if b.isEmpty { return a.count <= limit ? a.count : nil }
        rows.previous.removeAll(keepingCapacity: true)
        rows.previous.append(contentsOf: 0...b.count)
        rows.current.removeAll(keepingCapacity: true)
        rows.current.append(contentsOf: repeatElement(0, count: b.count + 1))
        rows.older.removeAll(keepingCapacity: true)
        rows.older.append(contentsOf: repeatElement(0, count: b.count + 1))
        for i in 1...a.count {
            rows.current[0] = i
            var smallest = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = Swift.min(
                    rows.previous[j] + 1, rows.current[j - 1] + 1, rows.previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = Swift.min(value, rows.older[j - 2] + 1)
                }
                rows.current[j] = value
                smallest = Swift.min(smallest, value)
            }
            if smallest > limit { return nil }
            swap(&rows.older, &rows.previous)
            swap(&rows.previous, &rows.current)
        }
        let distance = rows.previous[b.count]
        return distance <= limit ? distance : nil
    }

    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean \(VisibleText.quoted($0))?" } ?? ""
    }
}
