import JobRunnerCore

/// What one job file declares, before the checks that span files.
struct ParsedFile {
    var path: String
    var pipelines: [PipelineDefinition] = []
    var constraints: [(definition: ConstraintDefinition, location: SourceLocation)] = []
    /// The jobs, in file order: the array the workload keeps, shared rather than copied.
    var jobs: [JobDefinition] = []
    /// Beside each job, the places of its values that later checks may complain about.
    var places: [JobPlaces] = []
    var connectivity: (settings: ConnectivitySettings, location: SourceLocation)?
    var retention: (policy: RetentionPolicy, location: SourceLocation)?
    /// `plugins.paths`, absolute.
    var pluginPaths: [String] = []
    /// `secrets:`: names of environment variables whose values are masked (SPEC 3.1).
    var secrets: [(name: String, location: SourceLocation)] = []
    /// `notify:` hooks, with where each `jobs:` entry stands (checked once every job is known).
    var notify: [(hook: NotifyHook, jobMarks: [(String, SourceLocation)])] = []

    mutating func append(_ job: consuming ParsedJob) {
        jobs.append(job.definition)
        places.append(
            JobPlaces(
                needMarks: job.needMarks, pipelineMark: job.pipelineMark,
                constraintMarks: job.constraintMarks, matrixOf: job.matrixOf))
    }
}

/// A job with the places of the values that later checks may complain about.
struct ParsedJob {
    var definition: JobDefinition
    var needMarks: Marks
    var pipelineMark: Mark
    var constraintMarks: [Mark]
    /// Where the `every:` or `cron:` value stands, for periodic jobs.
    var scheduleLocation: SourceLocation?
    /// For one job of a `matrix:`: the id of the job as written, which `needs:` may name to
    /// mean every job of the matrix.
    var matrixOf: String?
}

/// Where a loaded job's values stand, for the checks that span files; kept beside the jobs
/// until those checks are made, not in them. The places are in the job's own file (its
/// `location`'s), so only lines and columns are kept: a large file has a hundred thousand.
struct JobPlaces {
    /// Where each need stands, in the order of the job's `needs`.
    var needMarks: Marks
    var pipelineMark: Mark
    /// Where each constraint stands, in the order of the job's `constraints`.
    var constraintMarks: [Mark]
    /// See ``ParsedJob/matrixOf``.
    var matrixOf: String?
}

/// A place in a job's own file: line and column, from 1.
struct Mark: Equatable {
    var line: UInt32
    var column: UInt32

    init(line: Int, column: Int) {
        self.line = UInt32(clamping: line)
        self.column = UInt32(clamping: column)
    }

    func location(in file: String) -> SourceLocation {
        SourceLocation(file: file, line: Int(line), column: Int(column))
    }
}

/// Marks in order, the first without an array of its own (most jobs have one need).
struct Marks: RandomAccessCollection {
    private var first = Mark(line: 0, column: 0)
    private var rest: [Mark] = []

    init() {}

    init(_ marks: some Sequence<Mark>) {
        for mark in marks { append(mark) }
    }

    var startIndex: Int { 0 }
    var endIndex: Int { first.line == 0 ? 0 : 1 + rest.count }
    subscript(position: Int) -> Mark { position == 0 ? first : rest[position - 1] }

    /// Adds a mark; lines count from 1.
    mutating func append(_ mark: Mark) {
        if first.line == 0 { first = mark } else { rest.append(mark) }
    }
}
