import Foundation
import JobRunnerCore
import Logging
import PostgresNIO
import Synchronization

/// A connection of its own that `LISTEN`s on one channel and calls back for each notification,
/// connecting again a second after it drops (a server restarted, the backend terminated); it
/// calls back once after each drop too, since notifications sent meanwhile are lost and the
/// listener's owner must look for itself.
final class NotificationListener: Sendable {
    private let task: Task<Void, Never>
    private let connection = Shared<PostgresConnection?>(nil)

    init(url: StoreURL, channel: String, logger: Logger, _ heard: @escaping @Sendable () -> Void) {
        let connection = self.connection
        // Listening lasts as long as its owner (the store, a runner's wake-ups), which stops it.
        task = Task {
            while !Task.isCancelled {
                var opened: PostgresConnection?
                do {
                    let configuration = try url.connection()
                    let made = try await PostgresConnection.connect(
                        on: PostgresConnection.defaultEventLoopGroup.any(), configuration: configuration,
                        id: 2,
                        logger: logger
                    ).get()
                    opened = made
                    connection.value.withLock { $0 = made }
                    try await made.listen(on: channel) { notifications in
                        for try await _ in notifications { heard() }
                    }
                } catch {
                    logger.debug("listening on \(channel) stopped: \(error)")
                }
                connection.value.withLock { $0 = nil }
                if let opened { try? await opened.close() }
                heard()
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Stops listening and closes the connection.
    func stop() {
        task.cancel()
        if let open = connection.value.withLock({ $0 }) { PostgresRunnerLock.Hold.close(open) }
    }
}

/// A value behind a lock that several owners share (a `Mutex` cannot be copied into a task).
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
}
