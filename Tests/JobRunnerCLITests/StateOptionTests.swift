import Foundation
import Testing

@Suite struct StateOptionTests {
    /// SPEC 4 lists `--state DIR` among the common options: the commands that read no state
    /// accept it too (a script passes it everywhere), and create nothing there.
    @Test func commandsThatReadNoStateAcceptStateAndCreateNothing() async throws {
        let workspace = try Workspace(files: [
            "jobs.yaml": """
            jobs:
              a:
                run: "true"
              b:
                every: 1h
                run: "true"
            """
        ])
        let unused = workspace.root + "/unused-state"
        for arguments in [
            ["validate", "jobs"], ["graph", "jobs"], ["next", "jobs"], ["plugins", "jobs"], ["version"],
        ] {
            let result = try await workspace.run(arguments + ["--state", unused], environment: [:])
            #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
            #expect(!result.stderr.contains("Unknown option"), "\(arguments[0]): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: unused), "nothing is created")
    }
}
