import ArgumentParser
import Foundation
import Glibc
import JobRunnerCore
import JobRunnerPages

/// `jobrunner report [--run ID] --html FILE`: a run's page as one self-contained HTML file.
struct ReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Write a run's page as one self-contained HTML file (a CI artifact).",
        discussion: """
            The file holds the run's graph, its timeline, each job with its attempts, reasons and \
            outputs, and the end of each failed attempt's log: CSS and SVG inline, no script, no \
            link to anything else, so it opens anywhere. Without --run, the current run.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .customLong("run"),
        help: ArgumentHelp("Report this run instead of the current one.", valueName: "id"))
    var runID: String?

    @Option(help: ArgumentHelp("Where to write the HTML; - for standard output.", valueName: "file"))
    var html: String

    func validate() throws {
        if html.isEmpty { throw ValidationError("--html needs a file name") }
    }

    func run() async throws {
        let stateDirectory = global.stateDirectory
        // The file is opened first: a report that cannot be written is said before anything is read.
        let output = try ReportFile(path: html)
        guard stateDirectory.hasDatabase else {
            output.discard()
            printError(
                "jobrunner: no runs yet in \(stateDirectory.path); `jobrunner run` makes one to report")
            throw ExitCode(ExitStatus.failed)
        }
        let document: String
        do {
            let store = try await stateDirectory.openForReading()
            defer { store.close() }
            let reader = store.reader
            var chosen = runID
            if chosen == nil { chosen = try await reader.currentRunID() }
            guard let id = chosen else {
                output.discard()
                printError(
                    "jobrunner: no runs yet in \(stateDirectory.path); `jobrunner run` makes one to report")
                throw ExitCode(ExitStatus.failed)
            }
            guard let page = try await Pages.report(reader, runID: id, now: Date()) else {
                output.discard()
                let known = (try? await reader.runs().map(\.id).suffix(5)) ?? []
                printError(
                    "jobrunner: no run '\(id)' in \(stateDirectory.path); recent runs: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
                )
                throw ExitCode(ExitStatus.failed)
            }
            document = page
        } catch let error as StoreError {
            output.discard()
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
        try output.finish(document)
    }
}

/// The report's file: written beside its final name and renamed into place, so a failure
/// leaves no half-written report (and no earlier one is lost to a failed write).
private struct ReportFile {
    let path: String
    /// The temporary file's path and descriptor; nil for standard output.
    let temporary: (path: String, fd: Int32)?

    init(path: String) throws {
        self.path = path
        guard path != "-" else {
            temporary = nil
            return
        }
        // Checked before the path is taken apart: '.', '/' or a trailing slash name no file.
        guard !path.isEmpty else {
            throw ValidationError(
                "cannot write the report to '': the name is empty; name a file (report.html)")
        }
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var isDirectory: ObjCBool = false
        if name.isEmpty || name == "." || name == ".."
            || (FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
                && isDirectory.boolValue)
        {
            throw ValidationError("cannot write the report to \(path): it is a directory; name a file")
        }
        let directory = slash.map { String(path[...$0]) } ?? ""
        let temporaryPath = directory + ".\(name).\(getpid()).tmp"
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.failure(path, errno) }
        temporary = (temporaryPath, fd)
    }

    private static func failure(_ path: String, _ code: Int32) -> ValidationError {
        ValidationError(
            "cannot write the report to \(path): \(String(cString: strerror(code))); name a file in a directory you can write"
        )
    }

    func discard() {
        guard let temporary else { return }
        close(temporary.fd)
        unlink(temporary.path)
    }

    /// Writes the document and puts the file in place.
    func finish(_ document: String) throws {
        guard let temporary else {
            let code = writeBytes(STDOUT_FILENO, Array(document.utf8))
            if code != 0 && code != EPIPE {
                printError(
                    "jobrunner: cannot write the report to standard output: \(String(cString: strerror(code)))"
                )
                throw ExitCode(ExitStatus.failed)
            }
            return
        }
        var code = writeBytes(temporary.fd, Array(document.utf8))
        if code == 0, fsync(temporary.fd) != 0 { code = errno }
        close(temporary.fd)
        if code == 0, rename(temporary.path, path) != 0 { code = errno }
        guard code == 0 else {
            unlink(temporary.path)
            throw Self.failure(path, code)
        }
    }
}
