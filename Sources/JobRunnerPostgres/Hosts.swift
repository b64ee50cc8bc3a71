import JobRunnerCore
import PostgresNIO

extension PostgresQueueStore {
    /// Every host that recorded a heartbeat, by name.
    public func hosts() async throws(StoreError) -> [HostRecord] {
        try await run("reading the hosts") { client in
            var hosts: [HostRecord] = []
            let rows = try await client.query(PostgresQuery(unsafeSQL: SQL.hosts), logger: logger)
            for try await (name, pid, age, running, completed, holding) in rows.decode(
                (String, Int32, Int64, Int32, Int64, Int64).self)
            {
                hosts.append(
                    HostRecord(
                        name: name, pid: Int(pid), heartbeatAge: .milliseconds(max(0, age)),
                        running: Int(running), completed: Int(completed), holding: Int(holding)))
            }
            return hosts
        }
    }
}
