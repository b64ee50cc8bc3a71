import Foundation
import Glibc

/// How the outputs of the jobs a shell attempt needs reach it (SPEC 5.7): each as
/// `JOBRUNNER_OUT_<JOB>_<KEY>`, except values the kernel would refuse in an environment. Linux
/// caps one environment string at 128 KiB and the whole of arguments and environment at a
/// quarter of the stack limit, so a long value — or one that would bring the values passed
/// inline past ``inlineTotal`` — is written to a file instead, whose path is in
/// `JOBRUNNER_OUT_<JOB>_<KEY>_FILE`.
struct NeededOutputs {
    /// Values longer than this many bytes go to a file.
    static let inlineLimit = 64 << 10
    /// At most this many bytes of entries (names, values and their pointers) go in the
    /// environment together.
    static let inlineTotal = 256 << 10

    /// Variable name to value, for the environment.
    private(set) var inline: [String: String] = [:]
    /// Variable name (without `_FILE`) to value, for files.
    private(set) var viaFile: [String: String] = [:]

    /// Splits outputs by job id, then key, in that order, so the same outputs always split
    /// the same way.
    init(_ needed: [String: [String: String]]) {
        var total = 0
        for job in needed.keys.sorted() {
            let outputs = needed[job] ?? [:]
            for key in outputs.keys.sorted() {
                let value = outputs[key] ?? ""
                let name =
                    "JOBRUNNER_OUT_\(ShellHandler.environmentName(job))_\(ShellHandler.environmentName(key))"
                // What the entry costs in the child's environment: `NAME=value`, its NUL and its
                // pointer. Counting values alone let 90,000 short outputs pass inline, whose
                // names alone were past what the kernel takes (`Argument list too long`).
                let size = name.utf8.count + value.utf8.count + 2 + MemoryLayout<UnsafeRawPointer>.size
                if value.utf8.count <= Self.inlineLimit && total + size <= Self.inlineTotal {
                    total += size
                    inline[name] = value
                } else {
                    viaFile[name] = value
                }
            }
        }
    }

    /// Writes each value that goes by file into `directory` (created `0700`, files `0600`),
    /// one file per variable, holding the value exactly; returns the `…_FILE` variables.
    func writeFiles(in directory: String) throws -> [String: String] {
        guard !viaFile.isEmpty else { return [:] }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw NeededOutputsError(path: directory, code: errno)
        }
        var variables: [String: String] = [:]
        for (name, value) in viaFile {
            let path = "\(directory)/\(name)"
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw NeededOutputsError(path: path, code: errno) }
            defer { close(fd) }
            let bytes = Array(value.utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes {
                    write(fd, $0.baseAddress?.advanced(by: written), $0.count - written)
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw NeededOutputsError(path: path, code: errno) }
                written += count
            }
            variables[name + "_FILE"] = path
        }
        return variables
    }

    /// Removes the files and their directory.
    static func remove(_ directory: String) {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A file for a needed output could not be written.
struct NeededOutputsError: Error, CustomStringConvertible {
    var path: String
    var code: Int32
    var description: String { "cannot write \(path): \(String(cString: strerror(code)))" }
}
