import JobRunnerCore
import Testing

/// Masking with many secrets (issue 26, item 15): the trie that finds them in one walk per
/// position masks exactly what trying every secret at every position masked, whole texts and
/// streams cut anywhere. (Its speed is measured in `make bench`, bench/costly_inputs.py.)
@Suite struct SecretTrieTests {
    /// Masking as it was done before the trie: at each position the longest secret that
    /// starts there, else the byte.
    static func reference(_ text: [UInt8], secrets: [[UInt8]]) -> [UInt8] {
        let sorted = secrets.sorted { $0.count > $1.count }
        var output: [UInt8] = []
        var index = 0
        outer: while index < text.count {
            for secret in sorted where index + secret.count <= text.count {
                if text[index..<(index + secret.count)].elementsEqual(secret) {
                    output += Array(SecretMasker.mask.utf8)
                    index += secret.count
                    continue outer
                }
            }
            output.append(text[index])
            index += 1
        }
        return output
    }

    /// A small generator, so every run tests the same cases.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: 0..<40) func masksAsTryingEverySecretDid(seed: Int) {
        var random = Generator(state: UInt64(seed))
        // A small alphabet, so secrets overlap, nest and share prefixes.
        let alphabet = Array("abc-".utf8)
        func word(_ length: Int) -> [UInt8] {
            (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
        }
        let secrets = (0..<(1 + Int(random.next() % 12))).map { _ in word(1 + Int(random.next() % 6)) }
        let text = word(Int(random.next() % 200))
        let masker = SecretMasker(values: secrets.map { String(decoding: $0, as: UTF8.self) })
        let expected = Self.reference(text, secrets: masker.secrets)
        #expect(Array(masker.mask(String(decoding: text, as: UTF8.self)).utf8) == expected)
        // The same stream cut at random places.
        var stream = MaskingStream(masker)
        var output: [UInt8] = []
        var start = 0
        while start < text.count {
            let end = min(text.count, start + 1 + Int(random.next() % 7))
            output += stream.feed(text[start..<end])
            start = end
        }
        output += stream.finish()
        #expect(output == expected, "secrets \(masker.secrets.map { String(decoding: $0, as: UTF8.self) })")
    }

    @Test func thousandsOfSecretsAreMaskedEachAndOnlyThemselves() {
        let values = (0..<2000).map { "secret-\($0)-value" }
        let masker = SecretMasker(values: values)
        #expect(
            masker.mask("a secret-1999-value and secret-7-value, not secret-2000-value")
                == "a *** and ***, not secret-2000-value")
    }
}
