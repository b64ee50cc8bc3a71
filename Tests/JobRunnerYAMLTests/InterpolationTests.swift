import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// `${NAME}`, `${NAME:-default}`, `$$` and `${matrix.KEY}` (SPEC 3.1), and `--env-file` lines.
@Suite struct InterpolationTests {
    let interpolation = Interpolation(environment: ["TARGET": "prod", "EMPTY": "", "HOME": "/root"])

    func expand(_ text: String) -> String? {
        try? interpolation.expand(text).get()
    }

    @Test func expandsNamesAndDefaults() {
        #expect(expand("${TARGET}") == "prod")
        #expect(expand("deploy-${TARGET}.log") == "deploy-prod.log")
        #expect(expand("${MISSING:-fallback}") == "fallback")
        #expect(expand("${EMPTY:-fallback}") == "fallback", ":- also replaces an empty value, as in a shell")
        #expect(expand("${EMPTY}") == "")
        #expect(expand("${MISSING:-}") == "")
        #expect(expand("${MISSING:-${TARGET}-x}") == "prod-x", "a default may hold a reference")
        #expect(expand("${TARGET:-x y z}") == "prod")
    }

    @Test func leavesOtherDollarsAlone() {
        #expect(expand("cost: $$5 and $$${TARGET}") == "cost: $5 and $prod")
        #expect(expand("$HOME stays, so does a lone $") == "$HOME stays, so does a lone $")
        #expect(expand("no dollar at all") == "no dollar at all")
    }

    @Test func unsetAndMalformedReferencesFail() {
        #expect(
            interpolation.expand("${NOPE}")
                == .failure(
                    .init(
                        message:
                            "${NOPE} is not set in the runner's environment; set it, put it in a file given with --env-file, or give a default: ${NOPE:-value}"
                    )))
        for bad in ["${", "${TARGET", "${}", "${1X}", "${A B}", "${TARGET:?x}", "${TARGET-x}"] {
            #expect(throws: Interpolation.Failure.self, "\(bad)") { try interpolation.expand(bad).get() }
        }
    }

    @Test func matrixValues() throws {
        let matrix = Interpolation(environment: [:], matrix: ["os": "debian"])
        #expect(try matrix.expand("img-${matrix.os}").get() == "img-debian")
        #expect(throws: Interpolation.Failure.self) { try matrix.expand("${matrix.arch}").get() }
        #expect(throws: Interpolation.Failure.self) { try interpolation.expand("${matrix.os}").get() }
    }

    @Test func envFileLines() {
        let text = """
            # a comment

            export A=1
            B = two words   # a comment
            C="line\\none \\"quoted\\" # not a comment"
            D='single $NOT ${EXPANDED}'
            E=
            """
        let (variables, problems) = EnvFile.parse(text, path: "x.env")
        #expect(problems.isEmpty, "\(problems)")
        #expect(variables.map(\.name) == ["A", "B", "C", "D", "E"])
        #expect(
            variables.map(\.value) == [
                "1", "two words", "line\none \"quoted\" # not a comment", "single $NOT ${EXPANDED}", "",
            ])
    }

    /// A file saved with Windows line endings reads as one with Unix ones, line numbers too.
    @Test func envFileLinesMayEndInCRLF() {
        let (variables, problems) = EnvFile.parse("A=1\r\nB=two\r\nbad\r\n", path: "x.env")
        #expect(variables.map(\.name) == ["A", "B"])
        #expect(variables.map(\.value) == ["1", "two"])
        #expect(problems.map(\.description).first?.hasPrefix("x.env:3:1: error:") == true, "\(problems)")
    }

    @Test func envFileProblemsAreLocated() {
        let (_, problems) = EnvFile.parse("GOOD=1\nno equals here\n1BAD=x\nQ=\"open\n", path: "x.env")
        #expect(
            problems.map(\.description) == [
                "x.env:2:1: error: expected NAME=value; lines of an --env-file are NAME=value, # comments or blank",
                "x.env:3:1: error: '1BAD' is not a variable name; use letters, digits and '_', not starting with a digit",
                "x.env:4:3: error: the value's \" quote is not closed on this line",
            ])
    }

    @Test func theRunnersEnvironmentWinsOverTheFile() {
        let merged = EnvFile.adding([("TARGET", "staging"), ("NEW", "1")], to: ["TARGET": "prod"])
        #expect(merged == ["TARGET": "prod", "NEW": "1"])
    }

    @Test func envAndWithValuesAreExpandedWhenLoaded() throws {
        let result = JobFileLoader.load(
            texts: [
                (
                    "jobs.yaml",
                    """
                    jobs:
                      deploy:
                        run: ./deploy.sh
                        env: { TARGET: "${TARGET:-staging}", LITERAL: default, PRICE: "$$5" }
                        with: { url: "https://${HOST}/api", port: 8080, list: ["${TARGET}"] }
                    """
                )
            ], environment: ["TARGET": "prod", "HOST": "example.org"])
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let job = try #require(result.workload?.job("deploy"))
        #expect(job.environment == ["TARGET": "prod", "LITERAL": "default", "PRICE": "$5"])
        #expect(job.parameters["url"] == .string("https://example.org/api"))
        #expect(job.parameters["port"] == .int(8080))
        #expect(job.parameters["list"] == .array([.string("prod")]))
        #expect(job.handler == .shell("./deploy.sh"))
    }

    @Test func expansionErrorsAreLocatedAtTheValue() {
        let result = JobFileLoader.load(
            texts: [
                (
                    "jobs.yaml",
                    "jobs:\n  a:\n    run: echo ${NOT_EXPANDED}\n    env:\n      X: ${UNSET}\n    with:\n      y: \"${\"\n"
                )
            ], environment: [:])
        #expect(
            result.diagnostics.map(\.description) == [
                "jobs.yaml:5:10: error: env value of 'X': ${UNSET} is not set in the runner's environment; set it, put it in a file given with --env-file, or give a default: ${UNSET:-value}",
                "jobs.yaml:7:10: error: with value of 'y': '${' has no closing '}'; write ${NAME}, ${NAME:-default}, or $$ for a '$'",
            ])
    }
}
