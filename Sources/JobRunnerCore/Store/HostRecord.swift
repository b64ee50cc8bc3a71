import Foundation

/// A host that worked on a shared store (`jobrunner hosts`): its last heartbeat and its work.
public struct HostRecord: Sendable, Hashable {
    /// `HOST:PID`, as the host named itself.
    public var name: String
    public var pid: Int
    /// How long ago its last heartbeat was recorded (by the database's clock).
    public var heartbeatAge: Duration
    /// The attempts it said it was running at that heartbeat.
    public var running: Int
    /// The attempts it completed since it started.
    public var completed: Int
    /// The attempts the store has it holding now (claimed, not completed, not taken back).
    public var holding: Int

    public init(
        name: String, pid: Int, heartbeatAge: Duration, running: Int, completed: Int, holding: Int
    ) {
        self.name = name
        self.pid = pid
        self.heartbeatAge = heartbeatAge
        self.running = running
        self.completed = completed
        self.holding = holding
    }
}
