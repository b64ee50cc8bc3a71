import Foundation
import JobRunnerCore

/// The files a shell attempt talks back through (SPEC 5.2, 5.7): `key=value` outputs in
/// `$JOBRUNNER_OUTPUT`, and `skip=REASON` / `retry-after=DURATION` in `$JOBRUNNER_CONTROL`.
struct AttemptFiles {
    /// At most this much output text per job (SPEC 5.7).
    static let outputLimit = 1 << 20

    let outputPath: String
    let controlPath: String

    init(directory: String, attempt: Int) {
        outputPath = "\(directory)/\(attempt).output"
        controlPath = "\(directory)/\(attempt).control"
    }

    /// Creates both files empty, so a job can append to them.
    func create() throws {
        let manager = FileManager.default
        for path in [outputPath, controlPath] {
            guard manager.createFile(atPath: path, contents: Data()) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
        }
    }

    enum OutputsError: Error, CustomStringConvertible {
        case tooLarge(Int)
        case malformed(line: Int, text: String)

        var description: String {
            switch self {
            case .tooLarge(let size):
                return "outputs too large: \(size) bytes written to JOBRUNNER_OUTPUT, at most \(AttemptFiles.outputLimit) allowed"
            case .malformed(let line, let text):
                return "JOBRUNNER_OUTPUT line \(line) is not key=value: '\(text.prefix(80))'"
            }
        }
    }

    /// The outputs written, or why they are unusable.
    func readOutputs() -> Result<[String: String], OutputsError> {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: outputPath),
            let size = attributes[.size] as? Int
        else { return .success([:]) }
        if size > Self.outputLimit { return .failure(.tooLarge(size)) }
        guard let data = FileManager.default.contents(atPath: outputPath) else { return .success([:]) }
        var outputs: [String: String] = [:]
        for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        {
            let text = line.hasSuffix("\r") ? line.dropLast() : line
            if text.isEmpty { continue }
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                return .failure(.malformed(line: index + 1, text: String(text)))
            }
            outputs[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        return .success(outputs)
    }

    /// What the control file asks for; unknown lines are ignored.
    func readControl() -> (skip: String?, retryAfter: Duration?) {
        guard let data = FileManager.default.contents(atPath: controlPath) else { return (nil, nil) }
        var skip: String?
        var retryAfter: Duration?
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
            if line.hasPrefix("skip=") {
                skip = String(line.dropFirst(5))
            } else if line.hasPrefix("retry-after="), let value = JobDuration.parse(String(line.dropFirst(12))) {
                retryAfter = value
            }
        }
        return (skip, retryAfter)
    }

    /// Removes both files once their contents are stored.
    func remove() {
        try? FileManager.default.removeItem(atPath: outputPath)
        try? FileManager.default.removeItem(atPath: controlPath)
    }
}
