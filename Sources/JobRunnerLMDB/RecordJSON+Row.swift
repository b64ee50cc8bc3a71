import Foundation
import JobRunnerCore
import JobRunnerJSON

extension RecordJSON {
    /// A job record read as ``decodeJobProgress(_:)`` reads it, but only when its bytes are
    /// exactly as ``encode(_:)-(JobRecord)`` writes them: members in order, no white space, plain
    /// ASCII strings without escapes. Each member is then matched by one comparison where it must
    /// be, not looked for; anything else answers nil, for the general reader. Resuming a run of
    /// 100,000 jobs reads 100,000 such rows.
    ///
    /// The members this version leaves out at their defaults (occurrence, needs, uncounted
    /// attempts, crashes in a row) may be there or not: rows of earlier versions have them all.
    static func decodeWrittenJobProgress(_ bytes: UnsafeRawBufferPointer) -> JobProgress? {
        var row = JSONReader(bytes)
        guard row.literal(#"{"jobID":"#), let jobID = row.plainString() else { return nil }
        var occurrence = ""
        if row.literal(#","occurrence":"#) {
            guard let text = row.plainString() else { return nil }
            occurrence = String(decoding: text, as: UTF8.self)
        }
        guard row.literal(#","pipeline":"#), row.plainString() != nil else { return nil }
        if row.literal(#","needs":["#), !row.literal("]") {
            repeat {
                guard row.plainString() != nil else { return nil }
            } while row.literal(",")
            guard row.literal("]") else { return nil }
        }
        if row.literal(#","maxAttempts":"#) { guard row.integer() != nil else { return nil } }
        guard row.literal(#","state":"#), let name = row.plainString(), let state = jobState(named: name)
        else {
            return nil
        }
        var reason: JobReason?
        if row.literal(#","reason":"#) {
            guard let words = row.plainString() else { return nil }
            reason = JobReason(words: String(decoding: words, as: UTF8.self), state: state)
        }
        guard row.literal(#","attempts":"#), let attempts = row.integer() else { return nil }
        var uncounted = 0
        if row.literal(#","uncountedAttempts":"#) {
            guard let count = row.integer() else { return nil }
            uncounted = count
        }
        var crashed = 0
        if row.literal(#","crashedInARow":"#) {
            guard let count = row.integer() else { return nil }
            crashed = count
        }
        var progress = JobProgress(
            jobID: String(decoding: jobID, as: UTF8.self), occurrence: occurrence, state: state,
            reason: reason,
            attempts: attempts, uncountedAttempts: uncounted, crashedInARow: crashed)
        if row.literal(#","exitCode":"#) {
            guard let code = row.integer() else { return nil }
            progress.exitCode = Int32(exactly: code)
        }
        // Each date in its place, or left out.
        if row.literal(#","firstStartedAt":"#) {
            guard let date = row.date() else { return nil }
            progress.firstStartedAt = date
        }
        if row.literal(#","startedAt":"#) {
            guard let date = row.date() else { return nil }
            progress.startedAt = date
        }
        if row.literal(#","finishedAt":"#) {
            guard let date = row.date() else { return nil }
            progress.finishedAt = date
        }
        if row.literal(#","nextAttemptAt":"#) {
            guard let date = row.date() else { return nil }
            progress.nextAttemptAt = date
        }
        if row.literal(#","waitingSince":"#) {
            guard let date = row.date() else { return nil }
            progress.waitingSince = date
        }
        if row.literal(#","allowFailure":"#) {
            guard row.literal("true") || row.literal("false") else { return nil }
        }
        if row.literal(#","when":"#) {
            guard let words = row.plainString(),
                RunCondition(rawValue: String(decoding: words, as: UTF8.self)) != nil
            else { return nil }
        }
        if row.literal(#","logProblem":"#) {
            guard let text = row.plainString() else { return nil }
            progress.logProblem = String(decoding: text, as: UTF8.self)
        }
        guard row.literal("}"), row.index == bytes.count else { return nil }
        return progress
    }
}
