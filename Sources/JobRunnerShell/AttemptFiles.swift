import Foundation
import Glibc
import JobRunnerCore

/// The files a shell attempt talks back through (SPEC 5.2, 5.7): `key=value` outputs in
/// `$JOBRUNNER_OUTPUT`, and `skip=REASON` / `retry-after=DURATION` in `$JOBRUNNER_CONTROL`.
struct AttemptFiles {
    /// At most this much output text per job (SPEC 5.7).
    static let outputLimit = AttemptResult.outputLimit
    /// At most this much in the control file: a few short lines.
    static let controlLimit = 64 << 10

    let outputPath: String
    let controlPath: String
    /// Where needed outputs too long for the environment are written (``NeededOutputs``).
    let neededDirectory: String
    /// Files a read found missing once the attempt ended: nothing to remove there.
    private var outputMissing = false
    private var controlMissing = false

    /// Beside the jobs' log folders in the run's folder (`directory`), named with a `%`, which
    /// no job's folder name can hold bare: a job named `a.1.output` once had its log folder at
    /// job `a`'s output file.
    init(directory: String, job: String, attempt: Int) {
        let stem = "\(directory)/\(LogLayout.component(job))%\(attempt)"
        outputPath = stem + ".output"
        controlPath = stem + ".control"
        neededDirectory = stem + ".needs"
    }

    /// Removes files a previous runner may have left at these paths (a job creates them by
    /// appending; most jobs never do, so nothing is created up front).
    func clear() {
        unlink(outputPath)
        unlink(controlPath)
    }

    /// The whole file, or nil when it cannot be opened (`missing` when it does not exist);
    /// fails past `limit` bytes.
    private static func read(_ path: String, limit: Int, missing: inout Bool) -> Result<
        [UInt8]?, OutputsError
    > {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            missing = errno == ENOENT
            return .success(nil)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { return .failure(.tooLarge(bytes.count)) }
        }
        return .success(bytes)
    }

    enum OutputsError: Error, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int, text: String)
        /// The control file is larger than ``AttemptFiles/controlLimit``: at least this many bytes.
        case controlTooLarge(Int)

        /// Why the attempt's outputs (or its control file) are refused.
        var refusal: AttemptEnd.Refusal {
            switch self {
            case .tooLarge(let size): .outputsTooLarge(written: size, limit: AttemptFiles.outputLimit)
            case .controlTooLarge(let size): .controlTooLarge(written: size, limit: AttemptFiles.controlLimit)
            case .malformed(let line, let text): .malformedOutput(line: line, text: text)
            }
        }

        var description: String { refusal.words }
    }

    /// The outputs written, or why they are unusable.
    mutating func readOutputs() -> Result<[String: String], OutputsError> {
        let data: [UInt8]
        switch Self.read(outputPath, limit: Self.outputLimit, missing: &outputMissing) {
        case .failure(let error): return .failure(error)
        case .success(nil): return .success([:])
        case .success(let bytes?): data = bytes
        }
        var outputs: [String: String] = [:]
        // `isNewline`: "\r\n" is one Character, which a split on "\n" never finds.
        for (index, text) in String(decoding: data, as: UTF8.self).split(
            omittingEmptySubsequences: false, whereSeparator: \.isNewline
        )
        .enumerated() {
            if text.isEmpty { continue }
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                return .failure(.malformed(line: index + 1, text: String(text)))
            }
            outputs[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return .success(outputs)
    }

    /// What the control file asks for; unknown lines are ignored. A `retry-after=` line whose
    /// value is no duration is ignored too, and said in `ignored`, for the attempt's log. A file
    /// larger than ``controlLimit`` is not read: `tooLarge` says so (at least that many bytes),
    /// and the caller refuses the attempt or says so in its log, never passing it as absent.
    mutating func readControl() -> (skip: String?, retryAfter: Duration?, ignored: [String], tooLarge: Int?) {
        let data: [UInt8]
        switch Self.read(controlPath, limit: Self.controlLimit, missing: &controlMissing) {
        case .failure(.tooLarge(let size)), .failure(.controlTooLarge(let size)):
            return (nil, nil, [OutputsError.controlTooLarge(size).description], size)
        case .failure, .success(nil): return (nil, nil, [], nil)
        case .success(let bytes?): data = bytes
        }
        var skip: String?
        var retryAfter: Duration?
        var ignored: [String] = []
        for (index, line) in String(decoding: data, as: UTF8.self).split(
            omittingEmptySubsequences: false, whereSeparator: \.isNewline
        ).enumerated() {
            if line.hasPrefix("skip=") {
                skip = String(line.dropFirst(5))
            } else if line.hasPrefix("retry-after=") {
                let text = String(line.dropFirst(12))
                if let value = JobDuration.parse(text) {
                    retryAfter = value
                } else {
                    ignored.append(
                        "JOBRUNNER_CONTROL line \(index + 1): retry-after takes a duration such as 30s or 5m, "
                            + "not \(VisibleText.quoted(text)); the retry policy's backoff applies")
                }
            }
        }
        return (skip, retryAfter, ignored, nil)
    }

    /// Removes both files once their contents are read, but for those a read found missing
    /// (the attempt's processes are all gone by then, so none can write them any more).
    func remove() {
        if !outputMissing { unlink(outputPath) }
        if !controlMissing { unlink(controlPath) }
    }
}
