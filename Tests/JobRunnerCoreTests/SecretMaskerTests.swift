import JobRunnerCore
import Testing

/// Masking secrets (SPEC 3.1), in whole texts and in streams that arrive in pieces.
@Suite struct SecretMaskerTests {
    let masker = SecretMasker(values: ["s3cr3t-token", "hunter2", ""])

    @Test func masksEveryOccurrenceInAText() {
        #expect(masker.mask("token=s3cr3t-token and again s3cr3t-token.") == "token=*** and again ***.")
        #expect(masker.mask("hunter2hunter2") == "******")
        #expect(masker.mask("nothing here, not even hunter") == "nothing here, not even hunter")
        #expect(SecretMasker.none.mask("s3cr3t-token") == "s3cr3t-token")
    }

    @Test func aSecretHoldingAnotherIsMaskedWhole() {
        let nested = SecretMasker(values: ["abc", "abcdef"])
        #expect(nested.mask("abcdef abc abcd") == "*** *** ***d")
    }

    @Test func multiLineSecretsAreAlsoMaskedLineByLine() {
        let key = SecretMasker(values: ["-----BEGIN KEY-----\nMIIEabcdef\n-----END KEY-----"])
        #expect(key.mask("line: MIIEabcdef") == "line: ***")
        #expect(key.mask("-----BEGIN KEY-----\nMIIEabcdef\n-----END KEY-----") == "***")
    }

    /// Feeds `text` cut at every given offset, the way a pipe may deliver it.
    func streamed(_ text: String, cuts: [Int], masker: SecretMasker? = nil) -> String {
        var stream = MaskingStream(masker ?? self.masker)
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        var start = 0
        for cut in cuts + [bytes.count] {
            output += stream.feed(bytes[start..<cut])
            start = cut
        }
        output += stream.finish()
        return String(decoding: output, as: UTF8.self)
    }

    @Test func aSecretSplitAcrossWritesIsMasked() {
        let text = "echo s3cr3t-token done"
        for cut in 1..<text.utf8.count {
            #expect(streamed(text, cuts: [cut]) == "echo *** done", "cut at \(cut)")
        }
        #expect(streamed(text, cuts: Array(1..<text.utf8.count)) == "echo *** done", "one byte at a time")
    }

    @Test func aSecretPrintedInSeveralChunksOrAcrossALineBreakIsMasked() {
        // printf 's3cr3t'; printf -- '-token\n': two writes, then the secret over a line break.
        #expect(streamed("s3cr3t-token\n", cuts: [6]) == "***\n")
        let multiLine = SecretMasker(values: ["first line\nsecond line"])
        #expect(streamed("> first line\nsecond line <", cuts: [8, 13, 15], masker: multiLine) == "> *** <")
    }

    @Test func onlyWhatMayStartASecretIsHeldBack() {
        var stream = MaskingStream(masker)
        #expect(stream.feed(Array("plain output\n".utf8)) == Array("plain output\n".utf8))
        #expect(stream.feed(Array("value: s3cr".utf8)) == Array("value: ".utf8))
        #expect(stream.feed(Array("ap".utf8)) == Array("s3crap".utf8))
        #expect(stream.feed(Array(" s3cr3t-tok".utf8)) == Array(" ".utf8))
        #expect(stream.finish() == Array("s3cr3t-tok".utf8), "the end shows a secret's start was not one")
    }

    @Test func aShorterSecretWaitsForALongerOneThatStartsWithIt() {
        let nested = SecretMasker(values: ["abc", "abcdef"])
        #expect(streamed("xabcdefy", cuts: [4], masker: nested) == "x***y", "not '***def'")
        #expect(streamed("xabcdy", cuts: [4], masker: nested) == "x***dy")
    }

    @Test func workloadSecretValuesComeFromTheEnvironmentAndJobEnv() {
        let workload = Workload(
            jobs: [
                JobDefinition(
                    id: "a", handler: .shell("true"), environment: ["API_TOKEN": "from-job", "OTHER": "x"])
            ],
            pipelines: [], secrets: ["API_TOKEN", "DB_PASSWORD", "API_TOKEN"])
        #expect(workload.secrets == ["API_TOKEN", "DB_PASSWORD"])
        #expect(
            Set(
                workload.secretValues(environment: [
                    "API_TOKEN": "from-env", "DB_PASSWORD": "pw", "HOME": "/",
                ]))
                == ["from-env", "from-job", "pw"])
    }
}
