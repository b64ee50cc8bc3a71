/// The PostgreSQL store's schema, as numbered migrations applied in order by `jobrunner
/// migrate` and recorded in the `jobrunner_migrations` table of the database itself.
///
/// A migration is never edited once released: a change is a new one, appended. Every table is
/// the store's own; the keys are `text COLLATE "C"` so that they sort by bytes, as the LMDB
/// store's keys do (`runs` lists `R1`, `R10`, `R2`). Records are kept as the JSON their
/// `Codable` conformance writes (`text`, not `jsonb`, so they read back byte for byte); the
/// few members a query selects on (a job's state, whether an attempt is open) are columns of
/// their own.
public struct Migration: Sendable {
    /// Its number: 1, 2, …; the schema's version is the highest applied.
    public let version: Int
    /// What it does, in words, stored beside its number.
    public let summary: String
    /// The statements, run in one transaction with the row that records it.
    public let statements: [String]

    public init(version: Int, summary: String, statements: [String]) {
        self.version = version
        self.summary = summary
        self.statements = statements
    }

    /// The table that records the migrations applied: the mark of a jobrunner database.
    public static let table = "jobrunner_migrations"

    /// Every migration of this build, in order.
    public static let all: [Migration] = [schema1, schema2]

    /// The tables of schema 1 (each row of a table is the LMDB store's row of the same name):
    ///
    /// | table | key | what |
    /// | --- | --- | --- |
    /// | `meta` | `key` | `currentRun` |
    /// | `claim` | one row | the owner whose commits are taken, its fencing number, its lease |
    /// | `runs` | `id` | `RunRecord` |
    /// | `jobs` | `run_id, job_id, occurrence` | `JobRecord`, and its `state` |
    /// | `attempts` | `run_id, job_id, occurrence, number` | `AttemptRecord`, and whether it is `open` |
    /// | `outputs` | `run_id, job_id, occurrence` | the job's outputs |
    /// | `pipelines` | `name` | `PipelineRecord` |
    /// | `requests` | `run_id, id` | `OperatorRequest` |
    /// | `schedules` | `job_id` | `ScheduleRecord` |
    /// | `event_sequence` | one row | the number of the last committed event |
    /// | `events` | `last_sequence` | one commit's events (`CommittedEvent.Batch`) |
    /// | `runner` | one row | the host and pid of the runner holding the runner lock |
    static let schema1 = Migration(
        version: 1,
        summary: "runs, jobs, attempts, outputs, pipelines, requests, schedules, events, the claim",
        statements: [
            #"CREATE TABLE meta (key text COLLATE "C" PRIMARY KEY, value text NOT NULL)"#,
            """
            CREATE TABLE claim (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                owner text NOT NULL,
                fencing bigint NOT NULL,
                granted_at timestamptz NOT NULL DEFAULT now())
            """,
            #"CREATE TABLE runs (id text COLLATE "C" PRIMARY KEY, record text NOT NULL)"#,
            """
            CREATE TABLE jobs (
                run_id text COLLATE "C" NOT NULL, job_id text COLLATE "C" NOT NULL,
                occurrence text COLLATE "C" NOT NULL, state text NOT NULL, record text NOT NULL,
                PRIMARY KEY (run_id, job_id, occurrence))
            """,
            """
            CREATE TABLE attempts (
                run_id text COLLATE "C" NOT NULL, job_id text COLLATE "C" NOT NULL,
                occurrence text COLLATE "C" NOT NULL, number integer NOT NULL, open boolean NOT NULL,
                record text NOT NULL,
                PRIMARY KEY (run_id, job_id, occurrence, number))
            """,
            """
            CREATE TABLE outputs (
                run_id text COLLATE "C" NOT NULL, job_id text COLLATE "C" NOT NULL,
                occurrence text COLLATE "C" NOT NULL, outputs text NOT NULL,
                PRIMARY KEY (run_id, job_id, occurrence))
            """,
            #"CREATE TABLE pipelines (name text COLLATE "C" PRIMARY KEY, record text NOT NULL)"#,
            """
            CREATE TABLE requests (
                run_id text COLLATE "C" NOT NULL, id bigint NOT NULL, record text NOT NULL,
                PRIMARY KEY (run_id, id))
            """,
            #"CREATE TABLE schedules (job_id text COLLATE "C" PRIMARY KEY, record text NOT NULL)"#,
            """
            CREATE TABLE event_sequence (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), last bigint NOT NULL)
            """,
            "INSERT INTO event_sequence (last) VALUES (0)",
            "CREATE TABLE events (last_sequence bigint PRIMARY KEY, batch text NOT NULL)",
            """
            CREATE TABLE runner (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                host text NOT NULL, pid integer NOT NULL, since timestamptz NOT NULL DEFAULT now())
            """,
        ])
}
