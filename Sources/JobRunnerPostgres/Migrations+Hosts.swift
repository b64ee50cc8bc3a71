extension Migration {
    /// The tables of schema 2, the attempts shared by hosts:
    ///
    /// | table | key | what |
    /// | --- | --- | --- |
    /// | `queued_attempts` | `id` | an attempt the deciding runner queued: its request, the host that claimed it, its lease and fencing number, its result |
    /// | `hosts` | `name` | each host's heartbeat and work, for `jobrunner hosts` |
    static let schema2 = Migration(
        version: 2,
        summary: "attempts queued for any host to claim, with leases and fencing; the hosts' heartbeats",
        statements: [
            "CREATE SEQUENCE attempt_fencing",
            """
            CREATE TABLE queued_attempts (
                id bigserial PRIMARY KEY,
                run_id text COLLATE "C" NOT NULL, job_id text COLLATE "C" NOT NULL,
                attempt integer NOT NULL, request text NOT NULL,
                state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done')),
                host text, fencing bigint, lease_until timestamptz,
                cancel boolean NOT NULL DEFAULT false, claims integer NOT NULL DEFAULT 0,
                result text, queued_at timestamptz NOT NULL DEFAULT now())
            """,
            // What the claim reads, in claim order; what the rescue and the renewal read.
            "CREATE INDEX queued_attempts_claim ON queued_attempts (id) WHERE state = 'queued'",
            "CREATE INDEX queued_attempts_leases ON queued_attempts (lease_until) WHERE state = 'running'",
            """
            CREATE TABLE hosts (
                name text COLLATE "C" PRIMARY KEY, pid integer NOT NULL,
                started_at timestamptz NOT NULL DEFAULT now(), heartbeat_at timestamptz NOT NULL,
                running integer NOT NULL, completed bigint NOT NULL)
            """,
        ])
}
