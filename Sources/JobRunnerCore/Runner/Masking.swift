import Foundation

/// The secrets of the loaded job files, shared by everything that writes, and replaced when
/// `serve` reloads the files.
public final class Secrets: Sendable {
    private let current: Locked<SecretMasker>

    public init(_ masker: SecretMasker = .none) { current = Locked(masker) }

    /// The masker in force now.
    public var masker: SecretMasker { current.withLock { $0 } }

    /// Masks with other values from now on.
    public func update(_ masker: SecretMasker) { current.withLock { $0 = masker } }
}

extension Workload {
    /// The values of `secrets:` (SPEC 3.1): each named variable's value in `environment` (the
    /// runner's, with `--env-file`), and any value a job's `env:` gives it.
    public func secretValues(environment: [String: String]) -> [String] {
        var values: [String] = []
        for name in secrets {
            if let value = environment[name] { values.append(value) }
            for job in jobs { if let value = job.environment[name] { values.append(value) } }
        }
        return values
    }
}

/// A handler whose results hold no secret: outputs and reasons are masked before the runner
/// stores or reports them (SPEC 3.1), so secrets never reach the store, `status` or events.
///
/// Logs a handler writes itself (plugins write theirs) are masked again once the attempt ends;
/// the shell handler masks its logs as they are written, and says so with `masksOwnLogs`.
public struct MaskingHandler: JobHandler {
    public let inner: any JobHandler
    public let secrets: Secrets
    /// Whether the inner handler's logs for this request are already masked.
    public let masksOwnLogs: @Sendable (AttemptRequest) -> Bool

    public init(
        _ inner: any JobHandler, secrets: Secrets,
        masksOwnLogs: @escaping @Sendable (AttemptRequest) -> Bool = { _ in false }
    ) {
        self.inner = inner
        self.secrets = secrets
        self.masksOwnLogs = masksOwnLogs
    }

    public func run(_ request: AttemptRequest) async -> AttemptResult {
        Self.masked(
            await inner.run(request), secrets: secrets, log: masksOwnLogs(request) ? nil : request.logPath)
    }

    /// The inner handler's start, its result masked before `ended` gets it (on the thread that
    /// ended the attempt, which may block on rewriting the log).
    public func start(_ request: AttemptRequest, ended: @escaping @Sendable (AttemptResult) -> Void)
        -> AttemptStop?
    {
        let secrets = self.secrets
        let log = masksOwnLogs(request) ? nil : request.logPath
        return inner.start(request) { result in ended(Self.masked(result, secrets: secrets, log: log)) }
    }

    /// `result` with the secrets masked, and the log at `log` (unless nil) rewritten masked.
    private static func masked(_ result: AttemptResult, secrets: Secrets, log: String?) -> AttemptResult {
        let masker = secrets.masker
        guard !masker.isEmpty else { return result }
        var result = result
        result.end = result.end.mappingTexts(masker.mask)
        result.outputs = maskedOutputs(result.outputs, with: masker)
        if let log { maskFile(log, with: masker) }
        return result
    }

    /// `outputs` with the secrets masked in keys as in values, so a key is stored, shown and
    /// passed on (environment names, plugin requests) only masked: `$TOKEN=1` becomes the output
    /// `***`, passed as `JOBRUNNER_OUT_<JOB>____`. Of keys that
    /// mask to the same text, the one first in byte order before masking keeps its value, so
    /// the result does not depend on the order of a dictionary.
    static func maskedOutputs(_ outputs: [String: String], with masker: SecretMasker) -> [String: String] {
        var masked: [String: String] = [:]
        for key in outputs.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let maskedKey = masker.mask(key)
            if masked[maskedKey] == nil { masked[maskedKey] = masker.mask(outputs[key] ?? "") }
        }
        return masked
    }

    /// Rewrites a file with its secrets masked, through a new file renamed over it, so a reader
    /// sees the whole old file or the whole new one.
    static func maskFile(_ path: String, with masker: SecretMasker) {
        guard let data = FileManager.default.contents(atPath: path) else { return }
        var stream = MaskingStream(masker)
        let masked = stream.feed(data) + stream.finish()
        guard masked.count != data.count || !masked.elementsEqual(data) else { return }
        let staging = path + ".masking"
        guard
            FileManager.default.createFile(
                atPath: staging, contents: Data(masked), attributes: [.posixPermissions: 0o600])
        else { return }
        if rename(staging, path) != 0 { unlink(staging) }
    }
}

/// Passes events on with their texts masked: reasons, output keys and values.
public struct MaskingObserver: RunObserver {
    public let inner: any RunObserver
    public let secrets: Secrets

    public init(_ inner: any RunObserver, secrets: Secrets) {
        self.inner = inner
        self.secrets = secrets
    }

    public func opened(_ run: OpenedRun) { inner.opened(run) }

    public func record(_ event: RunEvent) {
        let masker = secrets.masker
        guard !masker.isEmpty else { return inner.record(event) }
        inner.record(Self.masked(event, with: masker))
    }

    /// `event` with its texts masked: what `--events` writes and the store keeps of it.
    public static func masked(_ event: RunEvent, with masker: SecretMasker) -> RunEvent {
        var masked = event
        masked.reason = event.reason.map(masker.mask)
        masked.key = event.key.map(masker.mask)
        masked.value = event.value.map(masker.mask)
        return masked
    }

    public func missed(jobID: String, count: Int, catchUp: CatchUp, time: Date) {
        inner.missed(jobID: jobID, count: count, catchUp: catchUp, time: time)
    }

    public func flush() { inner.flush() }
}

/// Constraint commands whose failure lines hold no secret: a `satisfy` that fails quotes its
/// last line of output in the waiting jobs' reason, which is stored and shown.
public struct MaskingConstraints: ConstraintRunner {
    public let inner: any ConstraintRunner
    public let secrets: Secrets

    public init(_ inner: any ConstraintRunner, secrets: Secrets) {
        self.inner = inner
        self.secrets = secrets
    }

    public func check(_ constraint: ConstraintDefinition) async -> Bool {
        await inner.check(constraint)
    }

    public func satisfy(_ constraint: ConstraintDefinition) async -> SatisfyOutcome {
        masked(await inner.satisfy(constraint))
    }

    /// Runs `satisfy` keeping its output, and masks that log once it is written.
    public func satisfy(_ constraint: ConstraintDefinition, logPath: String, processPath: String) async
        -> SatisfyOutcome
    {
        let outcome = await inner.satisfy(constraint, logPath: logPath, processPath: processPath)
        if !secrets.masker.isEmpty { MaskingHandler.maskFile(logPath, with: secrets.masker) }
        return masked(outcome)
    }

    private func masked(_ outcome: SatisfyOutcome) -> SatisfyOutcome {
        switch outcome {
        case .satisfied: return .satisfied
        case .failed(let line): return .failed(lastLine: secrets.masker.mask(line))
        }
    }
}
