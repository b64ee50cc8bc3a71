import Foundation

extension RunRecord {
    /// For an occurrence recorded `skipped` or `missed`, which has no job, no attempt and no
    /// log: what became of it (as `status`, `logs` and the pages say); nil for any other run.
    /// - Parameter moment: how the reader writes its due date.
    public func withoutAttemptWords(moment: (Date) -> String) -> String? {
        guard let job = occurrenceOf else { return nil }
        let due = scheduledAt.map { " (due \(moment($0)))" } ?? ""
        switch state {
        case .skipped:
            return
                "occurrence \(id) of \(job)\(due) was skipped: it fell due while the last occurrence still ran (`overlap: skip`), so it has no attempt and no log"
        case .missed:
            return
                "occurrence \(id) of \(job)\(due) was missed: it fell due while no runner was up and `catchUp` did not run it, so it has no attempt and no log"
        default:
            return nil
        }
    }
}
