import Foundation
import Glibc
import JobRunnerCore
import Testing

@testable import JobRunnerYAML

/// Which files a directory stands for, and what is said about the entries that cannot be read
/// as job files (SPEC 3: "a directory means every *.yaml/*.yml file in it, recursively").
@Suite struct JobDirectoryTests {
    /// A fresh temporary folder, removed at the end.
    final class Folder {
        let path: String

        init() throws {
            path =
                FileManager.default.temporaryDirectory.appendingPathComponent(
                    "jobrunner-dirs-\(UUID().uuidString)"
                ).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ relative: String, _ text: String) throws {
            let url = URL(fileURLWithPath: path + "/" + relative)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }

        func link(_ relative: String, to target: String) throws {
            try FileManager.default.createSymbolicLink(
                atPath: path + "/" + relative, withDestinationPath: target)
        }
    }

    private func messages(_ result: JobFileLoader.Result) -> [String] {
        result.diagnostics.map(\.description)
    }

    @Test func aDirectoryNamedLikeAJobFileIsSearchedToo() throws {
        let folder = try Folder()
        try folder.write("a.yaml", "jobs:\n  a:\n    run: x\n")
        try folder.write("sub.yaml/b.yaml", "jobs:\n  b:\n    run: x\n")
        let result = JobFileLoader.load(paths: [folder.path])
        #expect(messages(result) == [])
        #expect(result.workload?.jobs.map(\.id) == ["a", "b"])
        #expect(result.files == [folder.path + "/a.yaml", folder.path + "/sub.yaml/b.yaml"])
    }

    @Test func aDanglingLinkNamesItsMissingTarget() throws {
        let folder = try Folder()
        try folder.write("a.yaml", "jobs:\n  a:\n    run: x\n")
        try folder.link("gone.yaml", to: "missing.yaml")
        let result = JobFileLoader.load(paths: [folder.path])
        #expect(
            messages(result) == [
                "\(folder.path)/gone.yaml:1:1: error: this is a symbolic link to 'missing.yaml', which does not exist; fix the link or remove it"
            ])
        #expect(result.workload == nil)
        let direct = JobFileLoader.load(paths: [folder.path + "/gone.yaml"])
        #expect(messages(direct) == messages(result))
    }

    @Test func aLinkLoopSaysSoInADirectoryAndGivenDirectly() throws {
        let folder = try Folder()
        try folder.write("a.yaml", "jobs:\n  a:\n    run: x\n")
        try folder.link("loop.yaml", to: "loop.yaml")
        let expected =
            "\(folder.path)/loop.yaml:1:1: error: too many levels of symbolic links (a link that leads back to itself); fix the link or remove it"
        #expect(messages(JobFileLoader.load(paths: [folder.path])) == [expected])
        #expect(messages(JobFileLoader.load(paths: [folder.path + "/loop.yaml"])) == [expected])
    }

    @Test func aFIFOIsNotAJobFileAndIsNeverWaitedOn() throws {
        let folder = try Folder()
        try folder.write("a.yaml", "jobs:\n  a:\n    run: x\n")
        #expect(mkfifo(folder.path + "/pipe.yaml", 0o644) == 0)
        let expected =
            "\(folder.path)/pipe.yaml:1:1: error: this is a FIFO, not a regular file; job files must be regular files: remove it or move it elsewhere"
        #expect(messages(JobFileLoader.load(paths: [folder.path])) == [expected])
        #expect(messages(JobFileLoader.load(paths: [folder.path + "/pipe.yaml"])) == [expected])
    }

    @Test func aDeviceIsNotAJobFile() {
        #expect(
            messages(JobFileLoader.load(paths: ["/dev/null"])) == [
                "/dev/null:1:1: error: this is a character device, not a regular file; job files must be regular files: remove it or move it elsewhere"
            ])
    }

    @Test func linkedDirectoriesAreFollowedAndALoopIsNotFollowedTwice() throws {
        let folder = try Folder()
        try folder.write("jobs/a.yaml", "jobs:\n  a:\n    run: x\n")
        try folder.write("shared/b.yml", "jobs:\n  b:\n    run: x\n")
        try folder.link("jobs/shared", to: "../shared")
        try folder.link("jobs/again", to: ".")
        try folder.link("jobs/up", to: "..")
        let result = JobFileLoader.load(paths: [folder.path + "/jobs"])
        #expect(messages(result) == [])
        #expect(result.workload?.jobs.map(\.id).sorted() == ["a", "b"])
        #expect(result.files == [folder.path + "/jobs/a.yaml", folder.path + "/jobs/shared/b.yml"])
    }

    @Test func otherEntriesWithoutAJobFileNameAreLeftAlone() throws {
        let folder = try Folder()
        try folder.write("a.yaml", "jobs:\n  a:\n    run: x\n")
        try folder.write("notes.txt", "x")
        try folder.link("dangling", to: "nowhere")
        #expect(mkfifo(folder.path + "/pipe", 0o644) == 0)
        let result = JobFileLoader.load(paths: [folder.path])
        #expect(messages(result) == [])
        #expect(result.files == [folder.path + "/a.yaml"])
    }
}
