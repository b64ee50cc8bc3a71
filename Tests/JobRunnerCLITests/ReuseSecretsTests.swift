// `stat` and `timespec`: with SwiftNIO in the build (the dashboard), their definitions are found in
// CDispatch's module, which MemberImportVisibility then asks to be imported.
import CDispatch
import Foundation
import Glibc
import Testing

/// The user reproductions of reuse (anchors, merge keys, `x-`, matrix), run-time input
/// (`${NAME}`, `--env-file`) and secrets (SPEC 3.1), on the built binary.
@Suite struct ReuseSecretsTests {
    @Test func mergeKeysAndXKeysAreAccepted() async throws {
        let workspace = try Workspace(files: [
            "ci.yaml": """
            x-common: &common
              timeout: 5m
              retry: { attempts: 2, delay: 10ms }
            jobs:
              build:
                <<: *common
                run: echo build
              test:
                <<: *common
                x-owner: qa
                run: echo test
                needs: [build]
            """
        ])
        let validate = try await workspace.run("validate", "jobs")
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stdout == "2 jobs in 1 file are valid\n")
        #expect(try await workspace.run("run", "jobs", "--progress", "none").status == 0)
    }

    @Test func aMatrixFansOutTwoHundredJobsAndACollectorNeedsThemAll() async throws {
        let workspace = try Workspace(files: [
            "fan.yaml": """
            pipelines:
              fan: { maxConcurrent: 16 }
            jobs:
              shard:
                pipeline: fan
                matrix: { group: [a, b, c, d, e, f, g, h, i, j], part: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19] }
                run: echo "$JOBRUNNER_PARAM_GROUP $JOBRUNNER_PARAM_PART $LABEL"
                env: { LABEL: "${matrix.group}/${matrix.part}" }
              collect:
                needs: [shard]
                run: echo collected
            """
        ])
        let run = try await workspace.run("run", "jobs", "--progress", "none")
        #expect(run.status == 0, "\(run.stderr)")
        let jobs = try await workspace.statusJobs()
        #expect(jobs.count == 201)
        #expect(jobs["shard-c-17"]?["state"] as? String == "succeeded")
        #expect(jobs["collect"]?["state"] as? String == "succeeded")
        #expect(try await workspace.run("logs", "shard-c-17").stdout == "c 17 c/17\n")
    }

    @Test func anErrorInAMatrixJobPointsAtItsLine() async throws {
        let workspace = try Workspace(files: [
            "m.yaml":
                "jobs:\n  t:\n    run: 'true'\n    matrix: { os: [debian, alpine] }\n    needs: [nope]\n"
        ])
        let validate = try await workspace.run("validate", "jobs")
        #expect(validate.status == 2)
        #expect(
            validate.stderr.contains("jobs/m.yaml:5:13: error: job 't-debian' needs 'nope'"),
            "\(validate.stderr)")
    }

    static let deploy = """
        jobs:
          deploy:
            run: echo "target=$TARGET region=$REGION literal=$LITERAL"
            env:
              TARGET: ${TARGET:-default}
              REGION: ${REGION:-eu}
              LITERAL: default
        """

    @Test func theRunnersEnvironmentReachesEnvThroughExpansion() async throws {
        let workspace = try Workspace(files: ["deploy.yaml": Self.deploy])
        try "TARGET=staging\nREGION=us # from the file\nLITERAL=ignored\n".write(
            toFile: workspace.root + "/prod.env", atomically: true, encoding: .utf8)

        var run = try await workspace.run(
            ["run", "jobs", "--progress", "none"], environment: ["TARGET": "prod", "LITERAL": "from-shell"])
        #expect(run.status == 0, "\(run.stderr)")
        // SPEC 3.1: a job's own env: value wins; the environment reaches it through ${NAME}.
        #expect(try await workspace.run("logs", "deploy").stdout == "target=prod region=eu literal=default\n")

        run = try await workspace.run(
            ["run", "jobs", "--new", "--progress", "none", "--env-file", "prod.env"], environment: [:])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            try await workspace.run("logs", "deploy").stdout == "target=staging region=us literal=default\n")

        run = try await workspace.run(
            ["run", "jobs", "--new", "--progress", "none", "--env-file", "prod.env"],
            environment: ["TARGET": "prod"])
        #expect(try await workspace.run("logs", "deploy").stdout == "target=prod region=us literal=default\n")
    }

    @Test func expansionAndEnvFileErrorsAreLocated() async throws {
        let workspace = try Workspace(files: [
            "deploy.yaml": "jobs:\n  deploy:\n    run: 'true'\n    env:\n      TARGET: ${TARGET}\n"
        ])
        try "GOOD=1\nnot a line\n".write(
            toFile: workspace.root + "/bad.env", atomically: true, encoding: .utf8)
        var run = try await workspace.run("run", "jobs")
        #expect(run.status == 2)
        #expect(
            run.stderr.hasPrefix(
                "jobs/deploy.yaml:5:15: error: env value of 'TARGET': ${TARGET} is not set in the runner's environment"
            ),
            "\(run.stderr)")
        run = try await workspace.run("run", "jobs", "--env-file", "bad.env")
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("bad.env:2:1: error: expected NAME=value"), "\(run.stderr)")
        run = try await workspace.run("validate", "jobs", "--env-file", "missing.env")
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("missing.env:1:1: error: cannot read this --env-file"), "\(run.stderr)")
    }

    @Test func secretsAreMaskedEverywhereAndNeverStored() async throws {
        let token = "tok-5f2a9c81e7"
        let workspace = try Workspace(files: [
            "secret.yaml": """
            secrets: [API_TOKEN, DB_PASSWORD]
            constraints:
              login:
                check: "false"
                satisfy: echo "cannot log in with $DB_PASSWORD"; exit 1
            jobs:
              gated:
                constraints: [login]
                run: "true"
              call:
                env: { API_TOKEN: "\(token)" }
                run: |
                  echo "calling with $API_TOKEN"
                  half=${API_TOKEN%?????}
                  printf '%s' "$half"; printf '%s\\n' "${API_TOKEN#$half}"
                  echo "db=$DB_PASSWORD"
                  echo "token=$API_TOKEN" >> "$JOBRUNNER_OUTPUT"
              fail:
                needs: [call]
                run: echo "still $JOBRUNNER_OUT_CALL_TOKEN"; echo "bad $DB_PASSWORD" >&2; exit 3
            """
        ])
        let run = try await workspace.run(
            ["run", "jobs", "--progress", "plain", "--events", "events.jsonl"],
            environment: ["DB_PASSWORD": "pw-0x1d3a"])
        #expect(run.status == 1)
        for (name, text) in [
            ("progress", run.stdout + run.stderr), ("events", workspace.read("events.jsonl")),
            ("status", try await workspace.run("status", "--json").stdout),
            ("status", try await workspace.run("status").stdout),
            ("log of call", try await workspace.run("logs", "call").stdout),
            ("log of fail", try await workspace.run("logs", "fail").stdout),
        ] {
            #expect(!text.contains(token) && !text.contains("pw-0x1d3a"), "\(name): \(text)")
        }
        #expect(try await workspace.run("logs", "call").stdout == "calling with ***\n***\ndb=***\n")
        #expect(try await workspace.run("logs", "fail").stdout == "still ***\nbad ***\n")
        #expect(
            (try await workspace.statusJobs()["call"]?["outputs"] as? [String: String]) == ["token": "***"])
        let gated = try #require(try await workspace.statusJobs()["gated"]?["reason"] as? String)
        #expect(gated.contains("cannot log in with ***"), "\(gated)")

        // Nothing in the state directory holds the values, and only its owner can read it.
        let files = FileManager.default.enumerator(atPath: workspace.state)?.allObjects as? [String] ?? []
        #expect(files.contains("db/data.mdb"))
        for file in files {
            let path = workspace.state + "/" + file
            var info = stat()
            #expect(stat(path, &info) == 0)
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            #expect(
                info.st_mode & 0o777 == (isDirectory ? 0o700 : 0o600),
                "\(file): \(String(info.st_mode & 0o777, radix: 8))")
            if !isDirectory, let data = FileManager.default.contents(atPath: path) {
                #expect(data.range(of: Data(token.utf8)) == nil, "\(file) holds the token")
                #expect(data.range(of: Data("pw-0x1d3a".utf8)) == nil, "\(file) holds the password")
            }
        }
        var info = stat()
        #expect(stat(workspace.state, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    /// A plugin writes its own log and returns outputs: both are masked, in-process and isolated.
    @Test(arguments: ["inprocess", "process"])
    func aPluginsLogAndOutputsAreMasked(isolation: String) async throws {
        let workspace = try Workspace(files: [
            "plugin.yaml": """
            secrets: [API_TOKEN]
            jobs:
              echo:
                plugin: testkit.echo
                isolation: \(isolation)
                with: { message: "token ${API_TOKEN}" }
            """
        ])
        let run = try await workspace.run(
            ["run", "jobs", "--progress", "plain"], environment: ["API_TOKEN": "tok-77aa11"])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        let log = try await workspace.run("logs", "echo").stdout
        #expect(log.contains("echo token *** from echo attempt 1"), "\(log)")
        #expect(!log.contains("tok-77aa11"))
        #expect(
            (try await workspace.statusJobs()["echo"]?["outputs"] as? [String: String])?["message"]
                == "token ***")
    }

    /// `serve --env-file` gives its jobs the file's variables, and a reload that adds `secrets:`
    /// masks them in the occurrences that follow.
    @Test func serveReadsTheEnvFileAndAReloadMasksNewSecrets() async throws {
        let job = "jobs:\n  tick:\n    every: 1s\n    run: echo \"token=$TOKEN\"\n"
        let workspace = try Workspace(files: ["serve.yaml": job])
        try "TOKEN=tok-serve-4242\n".write(
            toFile: workspace.root + "/serve.env", atomically: true, encoding: .utf8)
        let out = Pipe()
        let errors = Pipe()
        let serve = try workspace.start(
            ["serve", "jobs", "--progress", "plain", "--env-file", "serve.env"], stdout: out, stderr: errors)
        defer { if serve.isRunning { kill(serve.processIdentifier, SIGKILL) } }
        let lines = LineReader(out)
        let problems = LineReader(errors)
        let exit = ExitWatcher(serve)
        #expect(await lines.waitFor("succeeded   tick"), "\(lines.all)")

        try ("secrets: [TOKEN]\n" + job).write(
            toFile: workspace.jobs + "/serve.yaml", atomically: true, encoding: .utf8)
        #expect(await problems.waitFor("reloaded 1 job from"), "\(problems.all)")
        let before = lines.all.filter { $0.contains("succeeded   tick") }.count
        #expect(await lines.waitFor("succeeded   tick", times: before + 1))
        kill(serve.processIdentifier, SIGTERM)
        #expect(await exit.wait() == 0)

        // Every occurrence, not the newest 20 `runs` shows by default: on a busy machine the
        // test may take 20 seconds between the reload and the stop, and the occurrences from
        // before the reload would no longer be listed.
        let runs = try await workspace.run("runs", "--json", "--limit", "10000").stdout.split(
            separator: "\n"
        ).compactMap {
            try? statusJSON(String($0))
        }
        var logs: [String] = []
        for id in runs.compactMap({ $0["id"] as? String }) {
            logs.append(try await workspace.run("logs", "tick", "--run", id).stdout)
        }
        #expect(logs.contains("token=tok-serve-4242\n"), "before the reload: \(logs)")
        // The newest occurrence with output ran after the reload (a newer one may have been
        // stopped before it printed, or after, its log then ending with the interrupted line).
        #expect(logs.first { !$0.isEmpty }?.hasPrefix("token=***\n") == true, "after it: \(logs)")
    }

    /// A 422-byte "billion laughs" file: refused at once with a located error, in little memory.
    @Test(arguments: [false, true])
    func aBillionLaughsFailsFastWithSmallMemory(insideWith: Bool) async throws {
        let level = (1...8).map { index -> String in
            let name = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(index)))
            let previous = Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(index - 1)))
            return "\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",")
                + "]"
        }
        let first = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]"
        let text =
            insideWith
            ? "jobs:\n  j:\n    run: 'true'\n    with:\n"
                + ([first] + level).map { "      " + $0 + "\n" }.joined()
            : ([first] + level).map { $0 + "\n" }.joined()
        let workspace = try Workspace(files: ["bomb.yaml": text])
        // Virtual memory capped at 2 GiB: before the cap on aliases, this file took 5.9 GB.
        let run = try await workspace.runWithMemoryLimit(kibibytes: 2 << 20, ["validate", "jobs"])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(
            run.stderr.contains("YAML aliases here make this file stand for more than 100000 values"),
            "\(run.stderr)")
        #expect(
            run.stderr.hasPrefix(insideWith ? "jobs/bomb.yaml:10:14: error:" : "jobs/bomb.yaml:6:8: error:"),
            "\(run.stderr)")
    }
}

extension Workspace {
    /// Runs `jobrunner` with its virtual memory capped (`ulimit -v`), so runaway growth ends the
    /// process instead of the machine's memory.
    func runWithMemoryLimit(kibibytes: Int, _ arguments: [String]) async throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -v \(kibibytes); exec \"$0\" \"$@\"", jobrunnerBinary] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        return try await runCollecting(process)
    }
}
