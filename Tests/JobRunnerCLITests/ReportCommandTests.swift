import Foundation
import Testing

/// `jobrunner report [--run ID] --html FILE` through the binary: the file it writes, and its
/// errors with their exit statuses.
@Suite struct ReportCommandTests {
    static let jobs = """
        jobs:
          fetch:
            run: printf 'token=<script>alert(1)</script>\\n' >> "$JOBRUNNER_OUTPUT"
          build:
            needs: [fetch]
            run: printf '\\033[31mcompile error\\033[0m in <main.swift>\\n'; exit 4
          test:
            needs: [build]
            run: echo never
        """

    @Test("writes the run's page as one self-contained file")
    func writes() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.jobs])
        let run = try await workspace.run("run", workspace.jobs)
        #expect(run.status == 1)
        let finished = try await workspace.run("report", "--html", workspace.root + "/report.html")
        #expect(finished.status == 0, "\(finished.stderr)")
        let html = workspace.read("report.html")
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("exit:4 (1 attempt)"))
        #expect(html.contains("needs:build"))
        #expect(html.contains("token"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("<span class=\"fg-1\">compile error</span> in &lt;main.swift&gt;"))
        #expect(html.contains("<style>"))
        #expect(html.contains("<svg"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("<link"))
        #expect(!html.contains("href=\"/"))
        // No temporary file is left beside it.
        let left = try FileManager.default.contentsOfDirectory(atPath: workspace.root).filter {
            $0.hasSuffix(".tmp")
        }
        #expect(left.isEmpty)
    }

    @Test("--run picks a run; an unknown one exits 1 naming the recent ones")
    func unknownRun() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.jobs])
        _ = try await workspace.run("run", workspace.jobs)
        let finished = try await workspace.run(
            "report", "--run", "nope", "--html", workspace.root + "/r.html")
        #expect(finished.status == 1)
        #expect(finished.stderr.contains("jobrunner: no run 'nope' in"))
        #expect(finished.stderr.contains("recent runs: "))
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/r.html"))
    }

    @Test("no runs yet exits 1 and says so")
    func noRuns() async throws {
        let workspace = try Workspace(files: [:])
        let finished = try await workspace.run("report", "--html", workspace.root + "/r.html")
        #expect(finished.status == 1)
        #expect(finished.stderr.contains("jobrunner: no runs yet in"))
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/r.html"))
    }

    @Test("a file that cannot be written exits 2 with a sentence, before reading anything")
    func unwritable() async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.jobs])
        _ = try await workspace.run("run", workspace.jobs)
        let finished = try await workspace.run("report", "--html", workspace.root + "/missing/dir/r.html")
        #expect(finished.status == 2)
        #expect(
            finished.stderr.contains(
                "jobrunner: cannot write the report to \(workspace.root)/missing/dir/r.html: No such file or directory"
            ))
        #expect(!finished.stderr.contains("USAGE"))
        let directory = try await workspace.run("report", "--html", workspace.jobs)
        #expect(directory.status == 2)
        #expect(directory.stderr.contains("it is a directory"))
    }

    /// `--html .` crashed the binary (SIGILL taking the path apart); '/', '' and a trailing
    /// slash were not checked either.
    @Test(
        "a path that names no file exits 2 with a sentence", arguments: [".", "/", "", "jobs/", "./", ".."])
    func pathNamingNoFile(path: String) async throws {
        let workspace = try Workspace(files: ["ci.yaml": Self.jobs])
        _ = try await workspace.run("run", workspace.jobs)
        let finished = try await workspace.run("report", "--html", path)
        #expect(finished.status == 2, "\(finished.stderr)")
        #expect(
            finished.stderr.contains(
                path.isEmpty
                    ? "jobrunner: --html needs a file name"
                    : "jobrunner: cannot write the report to \(path): it is a directory; name a file"),
            "\(finished.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: workspace.root).filter {
            $0.hasSuffix(".tmp")
        }
        #expect(left.isEmpty)
    }

    @Test("--html is required")
    func needsFile() async throws {
        let workspace = try Workspace(files: [:])
        let finished = try await workspace.run("report")
        #expect(finished.status == 2)
        #expect(finished.stderr.contains("--html"))
    }
}
