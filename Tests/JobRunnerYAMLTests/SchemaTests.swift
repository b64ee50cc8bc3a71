import Foundation
import Testing

@testable import JobRunnerYAML

/// docs/jobrunner.schema.json, the job-file format for editors: it knows exactly the loader's
/// keys, and every job file of the repository validates against it.
@Suite struct SchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func schema() throws -> [String: Any] {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("docs/jobrunner.schema.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func keys(_ object: [String: Any]?) -> [String] {
        ((object?["properties"] as? [String: Any])?.keys).map { $0.sorted() } ?? []
    }

    @Test func theSchemaKnowsExactlyTheLoadersKeys() throws {
        let schema = try schema()
        let definitions = schema["definitions"] as? [String: [String: Any]]
        #expect(keys(schema) == JobFileKeys.topLevel.sorted())
        let sections: [(String, [String])] = [
            ("job", JobFileKeys.job), ("retry", JobFileKeys.retry), ("pipeline", JobFileKeys.pipeline),
            ("constraint", JobFileKeys.constraint), ("connectivity", JobFileKeys.connectivity),
            ("plugins", JobFileKeys.plugins), ("retention", JobFileKeys.retention),
        ]
        for (name, loaderKeys) in sections {
            #expect(keys(definitions?[name]) == loaderKeys.sorted(), "definitions.\(name)")
            #expect(definitions?[name]?["additionalProperties"] as? Bool == false, "definitions.\(name)")
        }
    }

    /// Runs the real validator (the Python package jsonschema, which `make test` installs).
    @Test func everyJobFileOfTheRepositoryValidates() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.root.appendingPathComponent("Tests/Schema/check_job_files.py").path,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // Read and awaited on a thread of its own: the tests share the cooperative pool (one
        // thread per core), and a test blocked on it would hold up the others' awaits.
        let output = await withCheckedContinuation { continuation in
            Thread {
                let bytes = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
            }.start()
        }
        #expect(
            process.terminationStatus == 0,
            "\(output)\n(the check needs the Python packages jsonschema and PyYAML: `make test` installs them)"
        )
        #expect(output.contains(", 0 problems"), "\(output)")
    }
}
