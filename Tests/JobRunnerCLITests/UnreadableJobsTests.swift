import Foundation
import Glibc
import Testing

/// Job directories that cannot be read are errors, never silently left out (SPEC 3). Root
/// reads every directory, so as root the commands run as `nobody` through setpriv.
@Suite(
    .enabled(
        if: getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"),
        "running as root without /usr/bin/setpriv: no way to run jobrunner as a user that permissions apply to"
    ))
struct UnreadableJobsTests {
    static let job = "jobs:\n  a:\n    run: \"true\"\n"

    @Test func anUnreadableSubdirectoryIsAnErrorAtItsPath() async throws {
        let workspace = try Workspace(files: [
            "a.yaml": Self.job, "b.yaml": "jobs:\n  b:\n    run: \"true\"\n",
        ])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.root)
        try FileManager.default.createDirectory(
            atPath: workspace.jobs + "/locked", withIntermediateDirectories: true)
        try "jobs:\n  h:\n    run: \"true\"\n".write(
            toFile: workspace.jobs + "/locked/h.yaml", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0], ofItemAtPath: workspace.jobs + "/locked")
        defer {
            try? FileManager.default.setAttributes(
                [.posixPermissions: 0o755], ofItemAtPath: workspace.jobs + "/locked")
        }
        // `run` must get as far as loading: a state directory `nobody` may write.
        try FileManager.default.createDirectory(atPath: workspace.state, withIntermediateDirectories: true)
        if getuid() == 0 {
            try FileManager.default.setAttributes(
                [.ownerAccountID: 65534, .groupOwnerAccountID: 65534], ofItemAtPath: workspace.state)
        }
        for command in ["validate", "run"] {
            let ended = try await workspace.runAsNobody(command, "jobs")
            #expect(ended.status == 2, "\(command): \(ended)")
            #expect(
                ended.stderr.contains(
                    "jobs/locked:1:1: error: cannot read this directory: permission denied; let the user running jobrunner read and enter it (chmod a+rx, or chown it to that user), or move it out of the job directories"
                ), "\(command): \(ended)")
            #expect(!ended.stdout.contains("valid"), "\(command): \(ended)")
        }
    }

    @Test func anUnreadableTopDirectoryIsPermissionDeniedNotEmpty() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.job])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.root)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: workspace.jobs)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.jobs)
        }
        let ended = try await workspace.runAsNobody("validate", "jobs")
        #expect(ended.status == 2, "\(ended)")
        #expect(
            ended.stderr.contains("jobs:1:1: error: cannot read this directory: permission denied;"),
            "\(ended)")
        #expect(!ended.stderr.contains("no *.yaml"), "\(ended)")
    }

    @Test func anUnreadableFileSaysPermissionDenied() async throws {
        let workspace = try Workspace(files: ["a.yaml": Self.job])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: workspace.root)
        try FileManager.default.setAttributes(
            [.posixPermissions: 0], ofItemAtPath: workspace.jobs + "/a.yaml")
        let ended = try await workspace.runAsNobody("validate", "jobs")
        #expect(ended.status == 2, "\(ended)")
        #expect(
            ended.stderr.contains(
                "jobs/a.yaml:1:1: error: cannot read this file: permission denied; let the user running jobrunner read it (chmod a+r, or chown it to that user), or move it out of the job directories"
            ), "\(ended)")
    }
}

extension Workspace {
    /// Runs `jobrunner` to completion as `nobody` when this process is root (as itself otherwise).
    func runAsNobody(_ arguments: String...) async throws -> Finished {
        var command = [jobrunnerBinary] + arguments
        if arguments.first == "run" { command += ["--state", state, "--progress", "plain"] }
        if getuid() == 0 {
            command = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + command
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        return try await runCollecting(process)
    }
}
