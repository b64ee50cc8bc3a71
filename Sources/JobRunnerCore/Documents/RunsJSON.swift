import Foundation
import JobRunnerJSON

/// A run as `runs --json` prints it (one line each) and `GET /api/v1/runs` lists it: one code
/// path for both.
public enum RunsJSON {
    /// The object of `run`, with how many of its jobs are in each state.
    public static func line(_ run: RunRecord, counts: [JobState: Int]) -> String {
        func date(_ value: Date?) -> String { value.map { JSONValue.quote(ISOTimestamp.iso($0)) } ?? "null" }
        let countsJSON = JobState.allCases.compactMap { state in
            counts[state].map { "\(JSONValue.quote(state.rawValue)): \($0)" }
        }
        return "{\"id\": \(JSONValue.quote(run.id)), \"state\": \(JSONValue.quote(run.state.rawValue)), "
            + "\"occurrenceOf\": \(run.occurrenceOf.map(JSONValue.quote) ?? "null"), "
            + "\"scheduledAt\": \(date(run.scheduledAt)), \"manual\": \(run.manual == true), "
            + "\"startedAt\": \(date(run.startedAt)), "
            + "\"finishedAt\": \(date(run.finishedAt)), \"counts\": {\(countsJSON.joined(separator: ", "))}}"
    }

    /// The runs of `entries` as one JSON array, newest first as given.
    public static func array(_ entries: [ReadModel.RunEntry]) -> String {
        "[" + entries.map { line($0.run, counts: $0.counts) }.joined(separator: ",\n") + "]\n"
    }
}
