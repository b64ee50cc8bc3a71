import JobRunnerCore

extension JobFileLoader {
    /// TEMPORARY (issue 10): the runner cannot run periodic jobs yet, so a load refuses them
    /// here, and only here, unless the caller asks for them with `allowingPeriodicJobs: true`
    /// (as `jobrunner next` does, which only computes dates). `run` and `validate` load with the
    /// default, so a periodic job is an error at its `every:` or `cron:` value.
    ///
    /// When the runner schedules occurrences, delete this function, its one call in
    /// ``JobFileLoader/checkAll(_:allowingPeriodicJobs:)``, and the `allowingPeriodicJobs`
    /// parameters if nothing else needs them.
    static func refusePeriodicJobsForNow(_ files: [ParsedFile]) -> [Diagnostic] {
        files.flatMap(\.jobs).compactMap { job in
            guard let schedule = job.definition.schedule, let location = job.scheduleLocation else {
                return nil
            }
            let key: String
            switch schedule {
            case .every: key = "every"
            case .cron: key = "cron"
            }
            return Diagnostic(
                at: location,
                "periodic jobs ('\(key)') are not supported by this jobrunner yet; `jobrunner next` shows when this one would fire"
            )
        }
    }
}
