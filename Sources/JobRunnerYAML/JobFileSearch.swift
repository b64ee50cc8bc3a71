import Glibc
import JobRunnerCore

/// Finds the job files a list of paths names: a file as given, a directory searched
/// recursively for `*.yaml` and `*.yml` (SPEC 3), following symbolic links to files and to
/// directories (a directory reached twice, as through a link to one of its parents, is searched
/// once). Whatever cannot be read is an error at its path that says why, never left out in
/// silence: a run without the jobs of an unreadable directory would be another run.
struct JobFileSearch {
    /// The job files, as named, in the order of the paths and sorted within each directory.
    private(set) var files: [String] = []
    private(set) var diagnostics: [Diagnostic] = []
    /// The directories searched so far, by device and inode.
    private var searched = Set<FileID>()

    private struct FileID: Hashable {
        var device: UInt64
        var inode: UInt64
    }

    init(paths: [String]) {
        for path in paths { add(path) }
    }

    private mutating func add(_ path: String) {
        switch Self.kind(of: path) {
        case .failure(let problem): report(problem, at: path)
        case .success(.file): files.append(path)
        case .success(.directory(let id)):
            // Named again, or inside a directory named before: its files are in already.
            guard !searched.contains(id) else { return }
            var found: [String] = []
            let problems = diagnostics.count
            search(
                path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path, id: id, into: &found)
            if found.isEmpty && diagnostics.count == problems {
                report(
                    "no *.yaml or *.yml job files in this directory; add one or name another directory",
                    at: path)
            }
            files.append(contentsOf: found.sorted())
        case .success(.other(let what)): report(Self.notRegular(what), at: path)
        }
    }

    /// Adds the job files under `directory` to `found`.
    private mutating func search(_ directory: String, id: FileID, into found: inout [String]) {
        guard searched.insert(id).inserted else { return }
        let entries: [String]
        switch Self.entries(of: directory) {
        case .success(let names): entries = names
        case .failure(let problem):
            report(problem, at: directory)
            return
        }
        for name in entries {
            let path = directory + "/" + name
            let isJobFile = name.hasSuffix(".yaml") || name.hasSuffix(".yml")
            switch Self.kind(of: path) {
            case .success(.directory(let id)): search(path, id: id, into: &found)
            case .success(.file) where isJobFile: found.append(path)
            case .success(.other(let what)) where isJobFile: report(Self.notRegular(what), at: path)
            case .failure(let problem) where isJobFile: report(problem, at: path)
            case .success, .failure: continue
            }
        }
    }

    private mutating func report(_ problem: Problem, at path: String) {
        report(problem.message, at: path)
    }

    private mutating func report(_ message: String, at path: String) {
        diagnostics.append(Diagnostic(at: SourceLocation(file: path, line: 1, column: 1), message))
    }

    /// Why a path cannot be used, as a sentence that says what to do.
    struct Problem: Error {
        var message: String
    }

    private enum Kind {
        case file
        case directory(FileID)
        /// Neither a regular file nor a directory: what it is ("a FIFO").
        case other(String)
    }

    /// What `path` is, its symbolic links followed.
    private static func kind(of path: String) -> Result<Kind, Problem> {
        var info = stat()
        guard stat(path, &info) == 0 else { return .failure(problem(errno, path: path, isDirectory: false)) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .success(.file)
        case S_IFDIR:
            return .success(.directory(FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))))
        default: return .success(.other(describe(mode: info.st_mode)))
        }
    }

    /// The names in `directory` but `.` and `..`, sorted.
    private static func entries(of directory: String) -> Result<[String], Problem> {
        guard let stream = opendir(directory) else {
            return .failure(problem(errno, path: directory, isDirectory: true))
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return .success(names.sorted())
    }

    /// What a file that is neither a regular file nor a directory is.
    static func describe(mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a regular file"
        }
    }

    static func notRegular(_ what: String) -> Problem {
        Problem(
            message:
                "this is \(what), not a regular file; job files must be regular files: remove it or move it elsewhere"
        )
    }

    /// The sentence for `error` (an `errno`) met opening or examining `path`.
    static func problem(_ error: Int32, path: String, isDirectory: Bool) -> Problem {
        let what = isDirectory ? "directory" : "file"
        switch error {
        case EACCES, EPERM:
            // Its owner may be another user: `u+r` would not help the one running jobrunner.
            let fix =
                isDirectory
                ? "read and enter it (chmod a+rx, or chown it to that user)"
                : "read it (chmod a+r, or chown it to that user)"
            return Problem(
                message:
                    "cannot read this \(what): permission denied; let the user running jobrunner \(fix), or move it out of the job directories"
            )
        case ELOOP:
            return Problem(
                message:
                    "too many levels of symbolic links (a link that leads back to itself); fix the link or remove it"
            )
        case ENOENT:
            if let target = linkTarget(path) {
                return Problem(
                    message:
                        "this is a symbolic link to \(VisibleText.quoted(target)), which does not exist; fix the link or remove it"
                )
            }
            return Problem(message: "no such file or directory; name a job file or a directory of them")
        case ENOTDIR:
            return Problem(
                message: "a part of this path is not a directory; name a job file or a directory of them")
        default:
            return Problem(message: "cannot read this \(what): \(String(cString: strerror(error))); check it")
        }
    }

    /// Where a symbolic link points, as written in the link; nil when `path` is not one.
    private static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
