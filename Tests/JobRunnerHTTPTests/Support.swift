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

/// A job directory and a state directory in a fresh temporary folder, removed at the end.
final class Place: Sendable {
    let root: String
    var jobs: String { root + "/jobs" }
    var state: String { root + "/state" }

    init(files: [String: String]) throws {
        root =
            FileManager.default.temporaryDirectory.appendingPathComponent(
                "jobrunner-http-\(UUID().uuidString)"
            ).path
        try FileManager.default.createDirectory(atPath: jobs, withIntermediateDirectories: true)
        for (name, text) in files {
            try text.write(toFile: jobs + "/" + name, atomically: true, encoding: .utf8)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Starts `jobrunner` with `arguments` and `--state`.
    func start(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Started {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: jobrunnerBinary)
        process.arguments = arguments + ["--state", state]
        process.currentDirectoryURL = URL(fileURLWithPath: root)
        var environment = ProcessInfo.processInfo.environment
        environment["JOBRUNNER_STATE"] = nil
        environment["JOBRUNNER_HTTP_TOKEN"] = nil
        environment.merge(extra) { $1 }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        return Started(process: process, stdout: out, stderr: err)
    }

    /// Runs `jobrunner` to its end: its status and standard error.
    func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        status: Int32, stderr: String
    ) {
        let started = try start(arguments, environment: environment)
        let stderr = await Task.detached {
            String(decoding: started.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }.value
        _ = await Task.detached { started.stdout.fileHandleForReading.readDataToEndOfFile() }.value
        await Task.detached { started.process.waitUntilExit() }.value
        return (started.process.terminationStatus, stderr)
    }

    /// Starts `jobrunner web --http 0` (and more) and waits for the line that says its URL.
    func web(_ more: [String] = [], environment: [String: String] = [:]) async throws -> Server {
        try await listen(["web", "--http", "0"] + more, environment: environment)
    }

    /// Starts `jobrunner` with `arguments` (which ask for `--http 0`) and waits for the line that
    /// says its URL.
    func listen(_ arguments: [String], environment: [String: String] = [:]) async throws -> Server {
        let started = try start(arguments, environment: environment)
        let port = await Task.detached { () -> Int? in
            let handle = started.stderr.fileHandleForReading
            var text = ""
            while true {
                let data = handle.availableData
                if data.isEmpty { return nil }
                text += String(decoding: data, as: UTF8.self)
                if let range = text.range(of: "dashboard at http://127.0.0.1:"),
                    let end = text[range.upperBound...].firstIndex(of: "/")
                {
                    return Int(text[range.upperBound..<end])
                }
            }
        }.value
        guard let port else {
            started.process.terminate()
            throw TestFailure("the dashboard never said where it listens")
        }
        return Server(started: started, port: port)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A started process and its pipes.
struct Started: @unchecked Sendable {
    // @unchecked: Process and Pipe are used from one task at a time.
    let process: Process
    let stdout: Pipe
    let stderr: Pipe
}

/// A `jobrunner web` at work on a port; stopped with SIGTERM.
struct Server: Sendable {
    let started: Started
    let port: Int

    func stop() async {
        started.process.terminate()
        await Task.detached { started.process.waitUntilExit() }.value
    }

    /// Waits for the process to end by itself: its exit status.
    func exitStatus() async -> Int32 {
        await Task.detached {
            started.process.waitUntilExit()
            return started.process.terminationStatus
        }.value
    }
}

/// An HTTP exchange over a plain socket: what a client sends and reads, byte for byte.
struct Exchange {
    var status: Int
    var headers: [String: String]
    var body: String
}

/// Opens a TCP connection to 127.0.0.1:`port`.
func connect(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard result == 0 else {
        close(fd)
        throw TestFailure("cannot connect to port \(port)")
    }
    return fd
}

/// Sends one request (`Connection: close`) and reads the whole answer.
func request(
    _ port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: String = ""
) async throws -> Exchange {
    try await Task.detached {
        let fd = try connect(port: port)
        defer { close(fd) }
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + body
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            bytes += chunk[0..<count]
        }
        return try parse(bytes)
    }.value
}

/// Parses a response (a chunked body is joined).
func parse(_ bytes: [UInt8]) throws -> Exchange {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let split = text.range(of: "\r\n\r\n") else { throw TestFailure("no response head in: \(text)") }
    let head = text[..<split.lowerBound].components(separatedBy: "\r\n")
    let parts = head[0].split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw TestFailure("no status in \(head[0])") }
    var headers: [String: String] = [:]
    for line in head.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
            in: .whitespaces)
    }
    var body = String(text[split.upperBound...])
    if headers["transfer-encoding"] == "chunked" { body = unchunk(body) }
    return Exchange(status: status, headers: headers, body: body)
}

private func unchunk(_ text: String) -> String {
    var rest = Substring(text)
    var body = ""
    while let lineEnd = rest.range(of: "\r\n") {
        guard let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 else { break }
        let start = lineEnd.upperBound
        let bytes = Array(rest[start...].utf8)
        body += String(decoding: bytes.prefix(size), as: UTF8.self)
        rest = Substring(String(decoding: bytes.dropFirst(size + 2), as: UTF8.self))
    }
    return body
}

/// Reads an event stream from an open connection until `done` says enough (or it ends).
func readEvents(port: Int, headers: [String: String] = [:], until done: @escaping @Sendable (String) -> Bool)
    async throws
    -> String
{
    try await Task.detached {
        let fd = try connect(port: port)
        defer { close(fd) }
        var text = "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var received = ""
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !done(received) {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += String(decoding: chunk[0..<count], as: UTF8.self)
        }
        return received
    }.value
}
