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

    mutating func append(_ job: consuming ParsedJob) {
        jobs.append(job.definition)
        places.append(
            JobPlaces(
                needLocations: job.needLocations, pipelineLocation: job.pipelineLocation,
                constraintLocations: job.constraintLocations, matrixOf: job.matrixOf))
    }
}

/// A job with the places of the values that later checks may complain about.
struct ParsedJob {
    var definition: JobDefinition
    var needLocations: [SourceLocation]
    var pipelineLocation: SourceLocation
    var constraintLocations: [SourceLocation]
    /// Where the `every:` or `cron:` value stands, for periodic jobs.
    var scheduleLocation: SourceLocation?
    /// For one job of a `matrix:`: the id of the job as written, which `needs:` may name to
    /// mean every job of the matrix.
    var matrixOf: String?
}

/// Where a loaded job's values stand, for the checks that span files; kept beside the jobs
/// until those checks are made, not in them.
struct JobPlaces {
    var needLocations: [SourceLocation]
    var pipelineLocation: SourceLocation
    var constraintLocations: [SourceLocation]
    /// See ``ParsedJob/matrixOf``.
    var matrixOf: String?
}
