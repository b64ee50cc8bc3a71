import Foundation
import JobRunnerCore

extension JobFileParser {
    /// The shortest `every:`: an occurrence is a run of its own, recorded in the store, so a
    /// shorter interval would mostly write records.
    static let shortestEvery = Duration.seconds(1)

    /// Reads `every:` or `cron:` (with `timezone:`), `catchUp:` and `overlap:` into `job`.
    /// `keys` are the job's keys over its file's defaults; `own` its own keys alone, for the
    /// warnings about keys a job sets to no effect.
    /// - Returns: where the `every:` or `cron:` value stands, when there is one.
    mutating func parseSchedule(
        of job: inout JobDefinition, keys: Known<JobKey>, own: Known<JobKey>
    ) -> SourceLocation? {
        // A one-shot job (most are) has none of these keys, and so nothing to read or warn about.
        guard
            keys.has(.every) || keys.has(.cron) || keys.has(.timezone) || keys.has(.catchUp)
                || keys.has(.overlap) || keys.has(.retention)
        else { return nil }
        var timeZone: TimeZone?
        if let node = keys[.timezone]?.value, let name = reader.nonEmptyString(node, what: "timezone") {
            switch TimeZoneName.zone(named: name) {
            case .success(let zone): timeZone = zone
            case .failure(let problem): reader.error(node, problem.message)
            }
        }
        var schedule: Schedule?
        if let node = keys[.every]?.value,
            let interval = reader.duration(node, what: "every", allowZero: false)
        {
            if interval < Self.shortestEvery {
                reader.error(node, "every must be at least 1s, not \(JobDuration.format(interval))")
            } else {
                schedule = .every(interval)
            }
        }
        if let node = keys[.cron]?.value, let text = reader.nonEmptyString(node, what: "cron") {
            do {
                let expression = try CronExpression(text)
                // No `timezone:` means the local time zone of the machine loading the file; a
                // wrong one (reported above) leaves no schedule rather than a guessed zone.
                if keys[.timezone] == nil || timeZone != nil {
                    schedule = .cron(expression, timeZone: timeZone ?? .current)
                }
            } catch {
                reader.error(node, error.description)
            }
        }
        let entry = keys[.cron] ?? keys[.every]
        if keys[.every] != nil, let cron = keys[.cron] {
            reader.error(
                cron.keyNode,
                "job \(VisibleText.quoted(job.id)) has both 'every' and 'cron'; keep one of them")
            schedule = nil
        }
        job.schedule = schedule

        if let node = keys[.catchUp]?.value,
            let value = reader.choice(node, what: "catchUp", as: CatchUp.self)
        {
            job.catchUp = value
        }
        if let node = keys[.overlap]?.value,
            let value = reader.choice(node, what: "overlap", as: Overlap.self)
        {
            job.overlap = value
        }
        if let retention = keys[.retention] {
            if entry == nil {
                // A one-shot job's runs are the file's runs of one-shot jobs: kept by the
                // top-level `retention:`.
                if own[.retention] != nil {
                    reader.error(
                        retention.keyNode,
                        "retention on a job applies to periodic jobs (each one's occurrences are kept apart); job \(VisibleText.quoted(job.id)) has neither every nor cron: set the top-level retention: for the runs of one-shot jobs"
                    )
                }
            } else {
                job.retention = parseRetention(retention.value, what: "retention")
            }
        }
        // Only the job's own keys: a file's defaults may hold them for its periodic jobs.
        if let timezone = own[.timezone], keys[.cron] == nil {
            reader.warning(
                timezone.keyNode,
                "timezone applies to cron only; job \(VisibleText.quoted(job.id)) has no cron, so it has no effect"
            )
        }
        for key in [JobKey.catchUp, .overlap] where entry == nil {
            if let setting = own[key] {
                reader.warning(
                    setting.keyNode,
                    "\(JobKey.names[key.rawValue]) applies to periodic jobs only; job \(VisibleText.quoted(job.id)) has neither every nor cron, so it has no effect"
                )
            }
        }
        return entry.map { reader.location($0.value) }
    }
}
