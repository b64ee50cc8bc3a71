import Foundation
import Glibc
import Testing

/// The built `jobrunner` binary (`make test` builds it before the tests).
let jobrunnerBinary: String = {
    if let path = ProcessInfo.processInfo.environment["JOBRUNNER_BINARY"] { return path }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    return root.appendingPathComponent(".build/debug/jobrunner").path
}()

/// What a finished `jobrunner` process left.
struct Finished {
    var status: Int32
    var stdout: String
    var stderr: String
    /// Killed by a signal (then `status` is the signal's number), rather than exited.
    var signalled = false
}

/// A job directory and a state directory in a fresh temporary folder.
struct Workspace: ~Copyable {
    let root: String
    var jobs: String { root + "/jobs" }
    var state: String { root + "/state" }

    init(files: [String: String]) throws {
        root =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "jobrunner-e2e-\(UUID().uuidString)"
            ).path
        try FileManager.default.createDirectory(atPath: root + "/jobs", withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(toFile: root + "/jobs/" + name, atomically: true, encoding: .utf8)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Starts `jobrunner` with `arguments`, `--state` added for the commands that take it.
    func start(
        _ arguments: [String], environment extra: [String: String] = [:], stdout: Pipe = Pipe(),
        stderr: Pipe = Pipe()
    ) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments =
            arguments
            + (["validate", "graph", "plugins", "next"].contains(arguments.first ?? "")
                ? [] : ["--state", state])
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        var environment = ProcessInfo.processInfo.environment
        environment["JOBRUNNER_STATE"] = nil
        // The tests' own plugins (testkit, …) are not beside the binary: the build put them in a
        // directory of their own (Tests/TestPluginLibraries).
        environment["JOBRUNNER_PLUGIN_PATH"] = testPluginDirectory
        environment.merge(extra) { $1 }
        process.environment = environment
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        return process
    }

    /// Runs `jobrunner` to completion.
    func run(_ arguments: String...) async throws -> Finished {
        try await run(arguments, environment: [:])
    }

    /// Runs `jobrunner` to completion with these environment variables added.
    func run(_ arguments: [String], environment: [String: String]) async throws -> Finished {
        let out = Pipe()
        let err = Pipe()
        let process = try start(arguments, environment: environment, stdout: out, stderr: err)
        return await finished(process, stdout: out, stderr: err)
    }

    /// The jobs of `status --json`, by id.
    func statusJobs() async throws -> [String: [String: Any]] {
        let text = try await run("status", "--json").stdout
        let jobs = try #require(try statusJSON(text)["jobs"] as? [[String: Any]])
        return Dictionary(jobs.map { ($0["id"] as? String ?? "", $0) }) { first, _ in first }
    }

    func read(_ relative: String) -> String {
        (try? String(contentsOfFile: root + "/" + relative, encoding: .utf8)) ?? ""
    }
}

extension FileHandle {
    /// The next bytes, or nil at the end (or on an error), reading again when a signal
    /// interrupts the read. Foundation's `availableData` answers an interrupted read with no
    /// bytes, which looked like the end of a live runner's events to a test, and
    /// `readDataToEndOfFile` traps on one; the tests share their process with others that
    /// start and signal children.
    func readChunk() -> Data? {
        var bytes = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = bytes.withUnsafeMutableBytes { Glibc.read(fileDescriptor, $0.baseAddress, $0.count) }
            if count > 0 { return Data(bytes[0..<count]) }
            if count == 0 || errno != EINTR { return nil }
        }
    }

    /// Every byte up to the end, as ``readChunk()`` reads them.
    func readAllBytes() -> Data {
        var data = Data()
        while let chunk = readChunk() { data.append(chunk) }
        return data
    }
}

/// Reads a pipe line by line on a thread of its own, so a test can await a line.
final class LineReader: @unchecked Sendable {
    // @unchecked: `lines` and `waiters` are guarded by `lock`.
    private let lock = NSLock()
    private var lines: [String] = []
    private var closed = false
    private var waiters: [(UUID, String, CheckedContinuation<Bool, Never>)] = []

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            var buffer = Data()
            while true {
                guard let chunk = handle.readChunk() else { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    add(line)
                }
            }
            finish()
        }
        thread.start()
    }

    /// Signalled on every line and at the end, for ``blockingWaitFor(_:times:)``.
    private let changed = NSCondition()

    /// Blocks the calling thread (not a task) until `times` lines contain `text`; false if the
    /// pipe closed first or after ``TestLimits/safety``. For tests whose timing must not depend on the
    /// concurrency pool, which other tests may keep busy.
    func blockingWaitFor(_ text: String, times: Int) -> Bool {
        let deadline = Date().addingTimeInterval(TestLimits.safetySeconds)
        changed.lock()
        defer { changed.unlock() }
        while Date() < deadline {
            let (count, isClosed) = lock.withLock { (lines.filter { $0.contains(text) }.count, closed) }
            if count >= times { return true }
            if isClosed { return false }
            _ = changed.wait(until: deadline)
        }
        return false
    }

    private func add(_ line: String) {
        defer {
            changed.lock()
            changed.broadcast()
            changed.unlock()
        }
        let ready = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            lines.append(line)
            // An empty text waits for any line.
            let matched = waiters.filter { $0.1.isEmpty || line.contains($0.1) }.map(\.2)
            waiters.removeAll { $0.1.isEmpty || line.contains($0.1) }
            return matched
        }
        for waiter in ready { waiter.resume(returning: true) }
    }

    private func finish() {
        defer {
            changed.lock()
            changed.broadcast()
            changed.unlock()
        }
        let pending = lock.withLock { () -> [CheckedContinuation<Bool, Never>] in
            closed = true
            defer { waiters = [] }
            return waiters.map(\.2)
        }
        for waiter in pending { waiter.resume(returning: false) }
    }

    /// Waits for a line containing `text`; false if the pipe closed first or if nothing matched
    /// within `limit` (a guard against a hung suite, not a timing assertion).
    func waitFor(_ text: String, limit: Duration = TestLimits.safety) async -> Bool {
        let id = UUID()
        let guardTask = Task { [self] in
            try await Task.sleep(for: limit)
            giveUp(id)
        }
        defer { guardTask.cancel() }
        return await withCheckedContinuation { continuation in
            let result: Bool? = lock.withLock {
                if lines.contains(where: { $0.contains(text) }) { return true }
                if closed { return false }
                waiters.append((id, text, continuation))
                return nil
            }
            if let result { continuation.resume(returning: result) }
        }
    }

    /// Waits until `times` lines contain `text`; false if the pipe closed first or the guard
    /// limit passed. Lines are re-read as they come, so no line is missed.
    func waitFor(_ text: String, times: Int, limit: Duration = TestLimits.safety) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let (count, isClosed) = lock.withLock { (lines.filter { $0.contains(text) }.count, closed) }
            if count >= times { return true }
            if isClosed { return false }
            // Wait for the next line of any kind, then count again.
            let marker = lock.withLock { lines.count }
            _ = await waitForLine(after: marker, limit: deadline - ContinuousClock.now)
        }
        // A last count: this task may resume past the deadline (other tests keep the pool busy)
        // with the awaited line already read.
        return lock.withLock { lines.filter { $0.contains(text) }.count } >= times
    }

    /// Waits until there are more than `count` lines.
    private func waitForLine(after count: Int, limit: Duration) async -> Bool {
        let id = UUID()
        let guardTask = Task { [self] in
            try await Task.sleep(for: limit)
            giveUp(id)
        }
        defer { guardTask.cancel() }
        return await withCheckedContinuation { continuation in
            let result: Bool? = lock.withLock {
                if lines.count > count { return true }
                if closed { return false }
                waiters.append((id, "", continuation))
                return nil
            }
            if let result { continuation.resume(returning: result) }
        }
    }

    private func giveUp(_ id: UUID) {
        let expired = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            guard let index = waiters.firstIndex(where: { $0.0 == id }) else { return nil }
            return waiters.remove(at: index).2
        }
        expired?.resume(returning: false)
    }

    var all: [String] { lock.withLock { lines } }
}

/// Runs `body`, which blocks on a child process or a pipe, on a thread of its own and awaits it
/// there. Swift Testing runs the tests of a process side by side on the cooperative pool, which
/// has one thread per core (two on a small machine): a test blocked on that pool for as long as
/// a `jobrunner` runs starves every other test's awaits, timers and continuations meanwhile.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Starts a process set up but for its output, and returns what it left once it ended.
func runCollecting(_ process: Process) async throws -> Finished {
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    return await finished(process, stdout: out, stderr: err)
}

/// What `process` left once it ended, both pipes read to their end first (so a chatty child
/// never blocks on a full pipe), all of it on a thread of its own (``onOwnThread(_:)``).
func finished(_ process: Process, stdout: Pipe, stderr: Pipe? = nil) async -> Finished {
    await onOwnThread {
        let out = stdout.fileHandleForReading.readAllBytes()
        let err = stderr?.fileHandleForReading.readAllBytes() ?? Data()
        process.waitUntilExit()
        return Finished(
            status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
            stderr: String(decoding: err, as: UTF8.self),
            signalled: process.terminationReason == .uncaughtSignal)
    }
}

/// Waits for a process without blocking the caller's thread.
func waitForExit(_ process: Process) async -> Int32 {
    await withCheckedContinuation { continuation in
        Thread {
            process.waitUntilExit()
            continuation.resume(returning: process.terminationStatus)
        }.start()
    }
}

/// Decodes `status --json`.
func statusJSON(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    return try #require(object as? [String: Any])
}

/// The exit of a started process, awaitable with a time limit.
final class ExitWatcher: @unchecked Sendable {
    // @unchecked: all state is guarded by `lock`.
    private let lock = NSLock()
    private var status: Int32?
    private var waiter: CheckedContinuation<Int32?, Never>?

    init(_ process: Process) {
        Thread { [self] in
            process.waitUntilExit()
            let waiting = lock.withLock { () -> CheckedContinuation<Int32?, Never>? in
                status = process.terminationStatus
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume(returning: process.terminationStatus)
        }.start()
    }

    /// The exit status, or nil if the process still runs after `limit`.
    func wait(atMost limit: Duration = TestLimits.safety) async -> Int32? {
        let timer = Task { [self] in
            try? await Task.sleep(for: limit)
            let waiting = lock.withLock { () -> CheckedContinuation<Int32?, Never>? in
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let done: Int32? = lock.withLock {
                if let status { return status }
                waiter = continuation
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }
}

/// Writes an executable script through a child shell, and returns once it is in place. Were
/// this process to hold the file open for writing, a child another test spawns at that moment
/// would inherit the descriptor until its exec, and executing the script then fails with
/// "Text file busy" (ETXTBSY).
func writeExecutable(_ text: String, to path: String) throws {
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: "/bin/sh")
    writer.arguments = ["-c", "printf '%s' \"$1\" > \"$2\" && chmod 755 \"$2\"", "sh", text, path]
    try writer.run()
    writer.waitUntilExit()
    try #require(writer.terminationStatus == 0, "the script \(path) was not written")
}

/// The one limit on waits for an event (a line, a file, an exit): a guard against a hung suite,
/// so generous that no loaded machine reaches it while the awaited thing is still coming. A
/// test waits for the event itself, never for a fixed time.
enum TestLimits {
    static let safety = Duration.seconds(safetySeconds)
    /// The same, for `Date` arithmetic.
    static let safetySeconds: TimeInterval = 900
}
