import JobRunnerCore

extension YAMLTree {
    /// The keys of a closing map (its children, key and value in turn) that repeat: for each
    /// repeat, one problem at it that names the first key of its text, and one at that first
    /// key that names the repeat; none when every key differs. At most `limit` problems are
    /// kept; the others are only counted, so that a file of a million repeats does not make
    /// a million messages.
    func duplicateKeys(_ children: ArraySlice<UInt32>, keeping limit: Int = .max) -> (
        kept: [YAMLComposer.Failure], counted: YAMLComposer.Failure.Counted?
    ) {
        // Most maps are small, with distinct plain keys: compared in place, without allocating.
        if children.count <= 32, !hasRepeatedKey(children) { return ([], nil) }
        let keys = stride(from: children.startIndex, to: children.endIndex, by: 2).map {
            YAMLTree.Node(index: Int(children[$0]))
        }
        guard keys.count > 1 else { return ([], nil) }
        if keys.count > 16,
            keys.allSatisfy({ records[$0.index].kind == .scalar && records[$0.index].tag == 0 })
        {
            if haveDistinctASCIITexts(keys) { return ([], nil) }
            var seen = Set<String>(minimumCapacity: keys.count)
            guard !keys.allSatisfy({ seen.insert(text($0) ?? "").inserted }) else { return ([], nil) }
        }
        // For each key, the first key equal to it.
        var first = Array(0..<keys.count)
        if keys.count <= 16 {
            for later in 1..<keys.count {
                for earlier in 0..<later
                where first[earlier] == earlier && sameKey(keys[earlier], keys[later]) {
                    first[later] = earlier
                    break
                }
            }
        } else {
            let hashes = keys.map { key in
                var hasher = Hasher()
                hashKey(key, into: &hasher)
                return hasher.finalize()
            }
            let order = keys.indices.sorted { (hashes[$0], $0) < (hashes[$1], $1) }
            var runStart = 0
            while runStart < order.count {
                var runEnd = runStart + 1
                while runEnd < order.count, hashes[order[runEnd]] == hashes[order[runStart]] { runEnd += 1 }
                for later in runStart + 1..<max(runStart + 1, runEnd) {
                    for earlier in runStart..<later
                    where first[order[earlier]] == order[earlier]
                        && sameKey(keys[order[earlier]], keys[order[later]])
                    {
                        first[order[later]] = order[earlier]
                        break
                    }
                }
                runStart = runEnd
            }
        }
        var problems: [YAMLComposer.Failure] = []
        var counted: YAMLComposer.Failure.Counted?
        for (later, earlier) in first.enumerated() where earlier != later {
            guard problems.count < limit else {
                // Both places are counted; the first key comes before its repeat.
                let original = mark(keys[earlier])
                let more = YAMLComposer.Failure.Counted(
                    errors: 2, line: original.line, column: original.column)
                counted = counted.map { $0.adding(more) } ?? more
                continue
            }
            let name = VisibleText.quoted(text(keys[later]) ?? "<uncovertable>")
            let (again, original) = (mark(keys[later]), mark(keys[earlier]))
            let message =
                "duplicate key \(name) in one map: each key (and each job id) may appear only once; "
            let ending = "; rename or remove the repeat"
            problems.append(
                YAMLComposer.Failure(
                    message: message + "it is also defined at ", line: again.line, column: again.column,
                    other: .init(line: original.line, column: original.column, ending: ending)))
            problems.append(
                YAMLComposer.Failure(
                    message: message + "it is repeated at ", line: original.line, column: original.column,
                    other: .init(line: again.line, column: again.column, ending: ending)))
        }
        return (problems, counted)
    }

    /// Whether the texts of `keys` (scalars) are all ASCII and all differ, told by their bytes'
    /// hashes without a string for each (a `jobs:` map has a hundred thousand keys); false when
    /// it cannot be told so (a text is not ASCII, or two hashes are equal).
    private func haveDistinctASCIITexts(_ keys: [YAMLTree.Node]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var hashes: [Int] = []
            hashes.reserveCapacity(keys.count)
            for key in keys {
                let record = records[key.index]
                let text = UnsafeBufferPointer(
                    rebasing: buffer[Int(record.start)..<Int(record.start + record.count)])
                // ASCII texts are equal exactly when their bytes are.
                guard text.allSatisfy({ $0 < 0x80 }) else { return false }
                var hasher = Hasher()
                hasher.combine(bytes: UnsafeRawBufferPointer(text))
                hashes.append(hasher.finalize())
            }
            hashes.sort()
            return zip(hashes, hashes.dropFirst()).allSatisfy { $0 != $1 }
        }
    }

    /// Whether two keys of a small closing map (its children, key and value in turn) are the
    /// same key (``YAMLTree/sameKey(_:_:)``).
    private func hasRepeatedKey(_ children: ArraySlice<UInt32>) -> Bool {
        var later = children.startIndex + 2
        while later < children.endIndex {
            let key = YAMLTree.Node(index: Int(children[later]))
            var earlier = children.startIndex
            while earlier < later {
                if sameKey(YAMLTree.Node(index: Int(children[earlier])), key) { return true }
                earlier += 2
            }
            later += 2
        }
        return false
    }
}
