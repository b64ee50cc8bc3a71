import ArgumentParser
import JobRunnerCore

/// `jobrunner migrate --store URL`: creates or upgrades the PostgreSQL store's schema (SPEC 8).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Create or upgrade the schema of a PostgreSQL store (--store URL).",
        discussion: """
            The schema's version is kept in the database (table jobrunner_migrations). Every other \
            command refuses a store whose schema is older (saying to run this) or newer than this \
            jobrunner knows, with exit status 3. A database holding another application's tables \
            is refused, and nothing is written to it.
            """
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let store = global.stateDirectory
        do {
            let (from, to) = try await store.migrate()
            if from == to {
                print("the store \(store.path) is at schema \(to) already")
            } else if from == 0 {
                print("created schema \(to) in the store \(store.path)")
            } else {
                print("upgraded the store \(store.path) from schema \(from) to \(to)")
            }
        } catch {
            printError("jobrunner: \(error)")
            throw ExitCode(ExitStatus.stateUnusable)
        }
    }
}
