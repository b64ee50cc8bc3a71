/// Where attempt logs go in the state directory's `logs/`: `RUN/JOB/ATTEMPT.log`.
public enum LogLayout {
    /// The log of one attempt.
    public static func attemptLog(in directory: String, runID: String, jobID: String, attempt: Int) -> String
    {
        "\(directory)/\(component(runID))/\(component(jobID))/\(attempt).log"
    }

    /// The folder of a run's constraint files: the output of each constraint's last `satisfy`
    /// (`NAME.log`) and the record of one under way (`NAME.pid`).
    public static func constraintFolder(in directory: String, runID: String) -> String {
        "\(directory)/\(component(runID))/\(Scheduler.constraintLogFolder)"
    }

    /// The output of the last `satisfy` of `constraint` in the run.
    public static func satisfyLog(in directory: String, runID: String, constraint: String) -> String {
        "\(constraintFolder(in: directory, runID: runID))/\(component(constraint)).log"
    }

    /// The ``SatisfyProcess`` of the `satisfy` of `constraint` under way in the run; no file
    /// when none runs.
    public static func satisfyProcess(in directory: String, runID: String, constraint: String) -> String {
        "\(constraintFolder(in: directory, runID: runID))/\(component(constraint)).pid"
    }

    /// An id as one path component. The loader refuses ids that are not (`.`, `..`, anything with
    /// `/`); should one come from elsewhere, it is written with `%` escapes (a character no id
    /// may use), so that it can never name another run's directory nor one outside `logs/`. A
    /// leading `.` is escaped too: a job named `.constraints` shared the folder of the run's
    /// constraint files (its log was a `satisfy`'s output), and no id names a hidden folder.
    public static func component(_ id: String) -> String {
        // Bytes, not characters: this runs for every attempt, and a String search by Character
        // cost a tenth of the runner's loop at 100,000 jobs.
        let needsEscapes = id.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "%") }
        guard id.isEmpty || id.utf8.first == UInt8(ascii: ".") || needsEscapes else { return id }
        if id == "." || id == ".." { return String(repeating: "%2E", count: id.count) }
        var result = ""
        for (index, scalar) in id.unicodeScalars.enumerated() {
            switch scalar {
            case "/": result += "%2F"
            case "%": result += "%25"
            case "." where index == 0: result += "%2E"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result.isEmpty ? "%" : result
    }
}
