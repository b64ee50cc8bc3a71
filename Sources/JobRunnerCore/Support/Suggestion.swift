/// Suggests the closest known word for a misspelt one ("did you mean"): case is ignored, and
/// a word qualifies within one edit for names up to 3 characters, two up to 8, three beyond.
public enum Suggestion {
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let lowered = word.lowercased()
        var best: (word: String, distance: Int)?
        let length = lowered.unicodeScalars.count
        for candidate in candidates {
            let candidateLength = candidate.unicodeScalars.count
            let limit = candidateLength <= 3 ? 1 : (candidateLength < 9 ? 2 : 3)
            // Each edit changes the length by one at most: a word far longer or shorter cannot
            // be within the limit, and its distance is not worth computing.
            guard abs(candidateLength - length) <= limit else { continue }
            let distance = editDistance(lowered, candidate.lowercased())
            guard distance <= limit else { continue }
            if best.map({ distance < $0.distance }) ?? true { best = (candidate, distance) }
        }
        return best?.word
    }

    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { "; did you mean \(VisibleText.quoted($0))?" } ?? ""
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
