import Foundation
import JobRunnerCore

extension StatusReport {
    /// `status --json` (SPEC 5.11): ``StatusJSON``, which the HTTP API writes too.
    func writeJSON(_ write: ([UInt8]) -> Void) {
        StatusJSON.write(view, write)
    }
}
