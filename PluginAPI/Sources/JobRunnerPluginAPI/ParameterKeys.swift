import Foundation

/// The keys of a job's `with:` map that a handler's `Parameters` never reads: typos such as
/// `excitd` for `excited`, which decoding alone would silently ignore.
///
/// `Parameters` is decoded once more from the same map through a decoder that notes every key
/// its `init(from:)` asks for (`decode`, `decodeIfPresent`, `contains`): what it asked for is what
/// its description says exists. A type that reads its keys by listing them (`allKeys`), reads
/// no keyed map at all, or nests containers this decoder does not follow, is taken to accept
/// any key.
enum ParameterKeys {
    /// One line per unknown key, `unknown parameter 'KEY' (the parameters are …); did you mean
    /// 'NAME'?`, or nil when every key is read. `data` decoded as `type` already.
    static func unknownKeys<P: Decodable>(in data: Data, for type: P.Type) -> String? {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], !object.isEmpty
        else { return nil }
        let notes = KeyNotes()
        do {
            _ = try P(from: NotingDecoder(object: object, notes: notes))
        } catch {
            return nil
        }
        guard notes.keyed, !notes.open else { return nil }
        let known = notes.asked.sorted()
        let unknown = object.keys.filter { !notes.asked.contains($0) }.sorted()
        guard !unknown.isEmpty else { return nil }
        let list =
            known.isEmpty ? "it takes none" : "it takes \(known.map { "'\($0)'" }.joined(separator: ", "))"
        return unknown.map { key in
            let hint = closest(to: key, in: known).map { "; did you mean '\($0)'?" } ?? ""
            return "unknown parameter '\(key)' (\(list))\(hint)"
        }.joined(separator: "\n")
    }

    /// The candidate nearest to `word` by edit distance, when near enough to be a typo.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let limit = max(1, word.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(Array(word.lowercased()), Array(candidate.lowercased()))
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Insertions, deletions, substitutions and swaps of neighbours that turn `a` into `b`
    /// (`cuont` is one from `count`).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}

/// What the noting decoder saw. Used by one decoding on one thread.
private final class KeyNotes {
    /// The top-level keys asked for.
    var asked = Set<String>()
    /// Whether the top level was read as a keyed map.
    var keyed = false
    /// Whether the type read in a way that accepts keys it did not name.
    var open = false
}

/// Gave up: the type reads the map in a way this decoder does not follow.
private struct NotFollowed: Error {}

/// A decoder of the top-level map that notes the keys asked for; each value is decoded by
/// `JSONDecoder` from its own JSON.
private struct NotingDecoder: Decoder {
    let object: [String: Any]
    let notes: KeyNotes
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        notes.keyed = true
        return KeyedDecodingContainer(NotingContainer<Key>(object: object, notes: notes))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        notes.open = true
        throw NotFollowed()
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        notes.open = true
        throw NotFollowed()
    }
}

private struct NotingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: Any]
    let notes: KeyNotes
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        notes.open = true
        return object.keys.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        notes.asked.insert(key.stringValue)
        return object[key.stringValue] != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        notes.asked.insert(key.stringValue)
        return object[key.stringValue] == nil || object[key.stringValue] is NSNull
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        notes.asked.insert(key.stringValue)
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "missing"))
        }
        let data = try JSONSerialization.data(withJSONObject: value, options: .fragmentsAllowed)
        return try JSONDecoder().decode(T.self, from: data)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type, key) }

    /// The generic `decode`, called from the overloads for the standard types.
    private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        notes.asked.insert(key.stringValue)
        notes.open = true
        throw NotFollowed()
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        notes.asked.insert(key.stringValue)
        notes.open = true
        throw NotFollowed()
    }

    func superDecoder() throws -> any Decoder {
        notes.open = true
        throw NotFollowed()
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        notes.asked.insert(key.stringValue)
        notes.open = true
        throw NotFollowed()
    }
}
