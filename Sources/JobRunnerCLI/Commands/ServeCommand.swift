import ArgumentParser
import Foundation

/// `jobrunner serve [PATH…]`: run the jobs, then keep scheduling periodic jobs until stopped.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the jobs and keep scheduling periodic jobs until stopped (SIGTERM or SIGINT).",
        discussion: """
            Reloads the job files within 2 s when they change, and on SIGHUP; a reload with errors \
            prints them and keeps the last good definitions. Prints one line per transition. Exit \
            status: 0 stopped cleanly; 2 invalid job files at start; 3 the state directory could not be used.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var session: SessionOptions

    func validate() throws { try session.check() }

    func run() async throws {
        _ = try await RunnerSession(global: global, options: session).run(serve: true, startNew: false)
        throw ExitCode.success
    }
}
