/// Every statement the PostgreSQL store sends, in one place, each with the index it uses.
///
/// Parameters are bound (`$1`, …), never pasted in. Writes of many rows bind one array per
/// column and `unnest` them: a batch is a handful of statements whatever its size. Every key
/// lookup is on a primary key (a B-tree; `run_id` leads every per-run table's key, so a run's
/// rows are one range of it); no table has another index.
enum SQL {
    // MARK: Schema (Schema.swift)

    /// The tables of the database's public schema: ours are known by name, any other means
    /// the database belongs to another application. (Catalog.)
    static let tables = """
        SELECT table_name::text FROM information_schema.tables
        WHERE table_schema = current_schema() ORDER BY 1
        """
    /// The migrations applied. (Primary key.)
    static let appliedMigrations = "SELECT version, summary FROM jobrunner_migrations ORDER BY version"
    static let createMigrations = """
        CREATE TABLE jobrunner_migrations (
            version integer PRIMARY KEY, summary text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now(), applied_by text NOT NULL)
        """
    static let recordMigration =
        "INSERT INTO jobrunner_migrations (version, summary, applied_by) VALUES ($1, $2, $3)"
    /// Held for the whole of `migrate`, so two hosts migrating at once do it one after the other.
    static let migrationLock = "SELECT pg_advisory_xact_lock(\(Locks.namespace), \(Locks.migrate))"

    // MARK: Claim (PostgresQueueStore+Writing.swift)

    /// Grants the next claim: the fencing number goes up by one. Waits for the commits in
    /// flight, which hold the row `FOR SHARE`: a claim is granted after them, and every later
    /// commit under an older claim sees the new number. (One row.)
    static let claim = """
        INSERT INTO claim (owner, fencing) VALUES ($1, 1)
        ON CONFLICT (only_row) DO UPDATE SET owner = excluded.owner, fencing = claim.fencing + 1,
            granted_at = now()
        RETURNING fencing
        """
    /// The claim now, read at the start of an owned commit and held `FOR SHARE` until its end:
    /// no claim can be granted in between, so the check holds for the whole transaction.
    static let currentClaim = "SELECT owner, fencing FROM claim FOR SHARE"

    // MARK: Writing a batch (BatchRows.swift)

    /// A run and every row of it. (Primary keys, by their leading `run_id`.)
    static let deleteRuns = [
        "DELETE FROM runs WHERE id = ANY($1)",
        "DELETE FROM jobs WHERE run_id = ANY($1)",
        "DELETE FROM attempts WHERE run_id = ANY($1)",
        "DELETE FROM outputs WHERE run_id = ANY($1)",
        "DELETE FROM requests WHERE run_id = ANY($1)",
    ]
    static let putMeta = """
        INSERT INTO meta (key, value) VALUES ($1, $2)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value
        """
    static let putRuns = """
        INSERT INTO runs (id, record) SELECT * FROM unnest($1::text[], $2::text[])
        ON CONFLICT (id) DO UPDATE SET record = excluded.record
        """
    static let putJobs = """
        INSERT INTO jobs (run_id, job_id, occurrence, state, record)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
        ON CONFLICT (run_id, job_id, occurrence) DO UPDATE
            SET state = excluded.state, record = excluded.record
        """
    static let putAttempts = """
        INSERT INTO attempts (run_id, job_id, occurrence, number, open, record)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::boolean[], $6::text[])
        ON CONFLICT (run_id, job_id, occurrence, number) DO UPDATE
            SET open = excluded.open, record = excluded.record
        """
    static let putOutputs = """
        INSERT INTO outputs (run_id, job_id, occurrence, outputs)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
        ON CONFLICT (run_id, job_id, occurrence) DO UPDATE SET outputs = excluded.outputs
        """
    static let putPipelines = """
        INSERT INTO pipelines (name, record) SELECT * FROM unnest($1::text[], $2::text[])
        ON CONFLICT (name) DO UPDATE SET record = excluded.record
        """
    static let putRequests = """
        INSERT INTO requests (run_id, id, record) SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[])
        ON CONFLICT (run_id, id) DO UPDATE SET record = excluded.record
        """
    static let deleteRequests = """
        DELETE FROM requests r USING unnest($1::text[], $2::bigint[]) AS d(run_id, id)
        WHERE r.run_id = d.run_id AND r.id = d.id
        """
    static let putSchedules = """
        INSERT INTO schedules (job_id, record) SELECT * FROM unnest($1::text[], $2::text[])
        ON CONFLICT (job_id) DO UPDATE SET record = excluded.record
        """

    // MARK: Events (PostgresQueueStore+Events.swift)

    /// Takes the numbers of a commit's events. The row stays locked until the commit ends, so
    /// commits that make events number them in commit order, consecutively. (One row.)
    static let takeEventNumbers = "UPDATE event_sequence SET last = last + $1 RETURNING last"
    static let putEvents = "INSERT INTO events (last_sequence, batch) VALUES ($1, $2)"
    /// The oldest rows beyond the events kept. (Primary key range.)
    static let dropOldEvents = "DELETE FROM events WHERE last_sequence <= $1"
    /// Wakes the followers of the events in other processes, at commit.
    static let notifyEvents = "SELECT pg_notify('\(Channels.events)', $1)"
    /// The rows holding the events after a number: the first row whose last event comes after
    /// it holds the next one. (Primary key range, in order.)
    static let eventsAfter = """
        SELECT last_sequence, batch FROM events WHERE last_sequence > $1 ORDER BY last_sequence LIMIT $2
        """
    static let latestEvent = "SELECT last FROM event_sequence"

    // MARK: Reading (PostgresQueueStore+Reading.swift)

    static let currentRun = "SELECT value FROM meta WHERE key = 'currentRun'"
    static let run = "SELECT record FROM runs WHERE id = $1"
    static let runs = "SELECT record FROM runs ORDER BY id"
    static let jobsOfRun = "SELECT record FROM jobs WHERE run_id = $1"
    /// Every job's state, and the record only where asked (`status` of a large run).
    static let jobStatesOfRun = "SELECT job_id, state FROM jobs WHERE run_id = $1"
    static let jobsOfRunNamed = "SELECT record FROM jobs WHERE run_id = $1 AND job_id = ANY($2)"
    static let attemptsOfRun = "SELECT record FROM attempts WHERE run_id = $1 ORDER BY job_id, number"
    /// What resuming reads: the attempts a runner left without an outcome. (Primary key range of
    /// the run, filtered on `open`.)
    static let openAttemptsOfRun = """
        SELECT record FROM attempts WHERE run_id = $1 AND open ORDER BY job_id, number
        """
    static let outputsOfRun = "SELECT job_id, outputs FROM outputs WHERE run_id = $1"
    static let outputsOfJobs = """
        SELECT o.run_id, o.job_id, o.outputs FROM outputs o
        JOIN unnest($1::text[], $2::text[]) AS j(run_id, job_id)
            ON o.run_id = j.run_id AND o.job_id = j.job_id AND o.occurrence = ''
        """
    static let pipelines = "SELECT record FROM pipelines"
    static let schedules = "SELECT record FROM schedules"
    static let requestsOfRun = "SELECT record FROM requests WHERE run_id = $1 ORDER BY id"

    // MARK: One pipeline's suspend count, read and written in one transaction

    /// Makes the row exist, so that `FOR UPDATE` has one to lock. (Primary key.)
    static let ensurePipeline =
        "INSERT INTO pipelines (name, record) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING"
    static let lockPipeline = "SELECT record FROM pipelines WHERE name = $1 FOR UPDATE"
    static let putPipeline = "UPDATE pipelines SET record = $2 WHERE name = $1"

    // MARK: The runner lock (PostgresRunnerLock.swift)

    static let tryRunnerLock = "SELECT pg_try_advisory_lock(\(Locks.namespace), \(Locks.runner))"
    static let tryOperatorLock = "SELECT pg_try_advisory_lock(\(Locks.namespace), \(Locks.operator))"
    static let operatorLock = "SELECT pg_advisory_lock(\(Locks.namespace), \(Locks.operator))"
    static let releaseOperatorLock = "SELECT pg_advisory_unlock(\(Locks.namespace), \(Locks.operator))"
    static let releaseRunnerLock = "SELECT pg_advisory_unlock(\(Locks.namespace), \(Locks.runner))"
    /// Whether a session holds the runner lock of this database. (`pg_locks`, a view of the lock
    /// table in shared memory.)
    static let runnerLockHeld = """
        SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = \(Locks.namespace) AND objid = \(Locks.runner) AND objsubid = 2 AND granted)
        """
    static let putRunner = """
        INSERT INTO runner (host, pid) VALUES ($1, $2)
        ON CONFLICT (only_row) DO UPDATE SET host = excluded.host, pid = excluded.pid, since = now()
        """
    static let readRunner = "SELECT host, pid FROM runner"

    // MARK: Waking the runner (PostgresWaker.swift)

    static let notifyWake = "SELECT pg_notify('\(Channels.wake)', '')"

    // MARK: Attempts shared by hosts (PostgresAttemptQueue.swift)

    /// Queues an attempt and wakes the workers. (Primary key, from the sequence.)
    static let queueAttempt = """
        WITH queued AS (
            INSERT INTO queued_attempts (run_id, job_id, attempt, request) VALUES ($1, $2, $3, $4)
            RETURNING id)
        SELECT id, pg_notify('\(Channels.queued)', '') FROM queued
        """
    /// Claims up to `$2` queued attempts for host `$1` under a lease of `$3` milliseconds, each
    /// with a new fencing number; rows other hosts are claiming are skipped, not waited for.
    /// (`queued_attempts_claim` in claim order, then the primary key.)
    static let claimAttempts = """
        WITH picked AS (
            SELECT id FROM queued_attempts WHERE state = 'queued' ORDER BY id LIMIT $2
            FOR UPDATE SKIP LOCKED)
        UPDATE queued_attempts a SET state = 'running', host = $1, claims = claims + 1,
            lease_until = now() + $3::bigint * interval '1 millisecond',
            fencing = nextval('attempt_fencing')
        WHERE a.id = ANY (ARRAY(SELECT id FROM picked))
        RETURNING a.id, a.fencing, a.request
        """
    /// Renews the leases of host `$1`'s attempts; returns each with whether it was cancelled.
    /// An attempt not returned is no longer the host's. (`queued_attempts_leases`.)
    static let renewLeases = """
        UPDATE queued_attempts SET lease_until = now() + $2::bigint * interval '1 millisecond'
        WHERE state = 'running' AND host = $1
        RETURNING id, fencing, cancel
        """
    /// The attempts of host `$1` that were cancelled, read between renewals.
    static let cancelledAttempts = """
        SELECT id, fencing FROM queued_attempts WHERE state = 'running' AND host = $1 AND cancel
        """
    /// Takes a result only from the host holding the attempt under this fencing number: a
    /// stale completion (the lease ended, the attempt was claimed again) matches no row and
    /// changes nothing. Wakes the deciding runner. (Primary key.)
    static let completeAttempt = """
        WITH done AS (
            UPDATE queued_attempts SET state = 'done', result = $3, lease_until = NULL
            WHERE id = $1 AND fencing = $2 AND state = 'running'
            RETURNING id)
        SELECT id, pg_notify('\(Channels.done)', '') FROM done
        """
    /// Asks for an attempt's end: a queued one is done at once with result `$2`; a running one
    /// is marked for its host, which hears it. (Primary key.)
    static let cancelAttempt = """
        WITH marked AS (
            UPDATE queued_attempts SET cancel = true,
                result = CASE WHEN state = 'queued' THEN $2 ELSE result END,
                state = CASE WHEN state = 'queued' THEN 'done' ELSE state END
            WHERE id = $1 AND state <> 'done'
            RETURNING id)
        SELECT id, pg_notify('\(Channels.queued)', ''), pg_notify('\(Channels.done)', '') FROM marked
        """
    /// The results of the attempts the deciding runner waits for, taken once. (Primary key.)
    static let takeResults = """
        DELETE FROM queued_attempts WHERE id = ANY($1) AND state = 'done' RETURNING id, result
        """
    /// The attempts whose host let its lease end more than `$1` milliseconds ago go back to
    /// the queue, to be claimed again under a new fencing number. (`queued_attempts_leases`.)
    static let rescueAttempts = """
        UPDATE queued_attempts SET state = 'queued', host = NULL, lease_until = NULL
        WHERE state = 'running' AND lease_until < now() - $1::bigint * interval '1 millisecond'
        RETURNING id
        """
    /// What a new deciding runner finds of an earlier one's attempts: nobody waits for them, so
    /// they are ended (queued ones at once, running ones by their hosts) and let go.
    static let abandonAttempts = [
        "DELETE FROM queued_attempts WHERE state <> 'running'",
        "UPDATE queued_attempts SET cancel = true WHERE state = 'running'",
        "SELECT pg_notify('\(Channels.queued)', '')",
    ]
    /// A host's heartbeat, with its work. (Primary key.)
    static let heartbeat = """
        INSERT INTO hosts (name, pid, heartbeat_at, running, completed) VALUES ($1, $2, now(), $3, $4)
        ON CONFLICT (name) DO UPDATE SET pid = excluded.pid, heartbeat_at = now(),
            running = excluded.running, completed = excluded.completed
        """
    /// The hosts, with the age of their heartbeat in milliseconds and the attempts each holds.
    /// (`hosts` by its primary key; the count by `queued_attempts_leases`, running rows only.)
    static let hosts = """
        SELECT h.name, h.pid, (extract(epoch FROM now() - h.heartbeat_at) * 1000)::bigint, h.running,
            h.completed,
            (SELECT count(*) FROM queued_attempts a WHERE a.state = 'running' AND a.host = h.name)
        FROM hosts h ORDER BY h.name
        """
}

/// The advisory locks of the store: two `integer` keys, the first one naming jobrunner.
enum Locks {
    static let namespace: Int32 = 0x6A_6F_62  // "job"
    static let runner: Int32 = 1
    static let `operator`: Int32 = 2
    static let migrate: Int32 = 3
}

/// The notification channels.
enum Channels {
    /// A commit made events: followers read them.
    static let events = "jobrunner_events"
    /// An operator request or a suspend count waits: the runner reads them.
    static let wake = "jobrunner_wake"
    /// An attempt was queued, or one running was cancelled: the hosts' workers look.
    static let queued = "jobrunner_queued"
    /// A host completed an attempt: the deciding runner takes its result.
    static let done = "jobrunner_done"
}
