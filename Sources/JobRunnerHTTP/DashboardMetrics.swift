import CoreMetrics
import Foundation
import JobRunnerCore
import Metrics
import Prometheus

/// `GET /metrics` (SPEC 7): Prometheus text, every name starting `jobrunner_`. Attempts are fed
/// by the runner's events (``observer``: a few counter updates per event, no store read);
/// runs and occurrences by the committed events the dashboard follows; the rest is read when
/// scraped. No label takes unbounded values but job ids.
public final class DashboardMetrics: Sendable {
    /// The metrics' registry: what a scrape writes out.
    public let registry = PrometheusCollectorRegistry()
    /// The store's commits, from submission to durable; nil with no runner in this process
    /// (`web`), which commits nothing worth timing: the metric is left out.
    private let commits: Prometheus.DurationHistogram?

    /// What the runner's events are counted with: each job's pipeline, and the attempts under way.
    private struct Attempts {
        var pipelines: [String: String] = [:]
        /// Jobs with an attempt under way: since when, and the pipeline counted.
        var running: [String: (since: Date, pipeline: String)] = [:]
        /// Jobs ready for an attempt: since when.
        var ready: [String: Date] = [:]
        /// Attempts ended, by job, pipeline and outcome: a label set per job (see
        /// ``LabeledCounters`` for why not in the registry).
        var ended = LabeledCounters(
            name: Names.attemptsTotal, help: Names.attemptsHelp, labelNames: ["job", "pipeline", "outcome"])
        /// Each pipeline's metrics, made in the registry once (a registry lookup per event is not).
        var byPipeline: [String: PipelineMetrics] = [:]
    }

    /// The metrics labelled by pipeline only (a bounded set).
    private struct PipelineMetrics {
        let running: Prometheus.Gauge
        let wait: Prometheus.DurationHistogram
        let duration: Prometheus.DurationHistogram
    }

    private let attempts = Locked(Attempts())
    /// Run states by run id, and the occurrences seen, from the committed events.
    private let runs = Locked<(states: [String: RunState], occurrences: [String: String])>(([:], [:]))
    /// Occurrences started, skipped and missed, by job and result.
    private let occurrences = Locked(
        LabeledCounters(
            name: Names.occurrencesTotal, help: Names.occurrencesHelp, labelNames: ["job", "result"]))
    private let sseClients: Prometheus.Gauge
    private let sseDropped: Prometheus.Counter
    private static let durationBuckets: [Duration] = [
        .milliseconds(10), .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5), .seconds(15),
        .seconds(60), .seconds(300), .seconds(900), .seconds(3600),
    ]
    private static let waitBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(10), .milliseconds(100), .seconds(1), .seconds(10), .seconds(60),
        .seconds(600), .seconds(3600),
    ]
    private static let commitBuckets: [Duration] = [
        .microseconds(100), .milliseconds(1), .milliseconds(5), .milliseconds(20), .milliseconds(100),
        .milliseconds(500), .seconds(2),
    ]

    /// - Parameter timesCommits: whether a runner's commits are timed here (`run`, `serve`);
    ///   `web` has none, and no `jobrunner_store_commit_seconds`.
    public init(timesCommits: Bool = true) {
        // Made by the registry with its descriptor, as every other metric, so the scrape has its
        // `# HELP` (a swift-metrics `Timer` made through the factory has none).
        commits =
            timesCommits
            ? registry.makeDurationHistogram(descriptor: Names.storeCommit, buckets: Self.commitBuckets) : nil
        sseClients = registry.makeGauge(descriptor: Names.eventClients)
        sseDropped = registry.makeCounter(descriptor: Names.eventClientsDropped)
    }

    // MARK: The runner's events

    /// Each job's pipeline (the job files' definitions; again on reload).
    public func setPipelines(_ pipelines: [String: String]) {
        attempts.withLock { $0.pipelines = pipelines }
    }

    /// An observer for the runner: counts attempts as their events come.
    public var observer: any RunObserver { MetricsObserver(metrics: self) }

    fileprivate func record(_ event: RunEvent) {
        guard let job = event.job else { return }
        attempts.withLock { state in
            let pipeline = state.pipelines[job] ?? event.pipeline ?? "default"
            switch event.kind {
            case .queued:
                state.ready[job] = event.time
            case .started:
                let readySince = state.ready.removeValue(forKey: job) ?? event.time
                state.running[job] = (event.time, pipeline)
                let metrics = metrics(of: pipeline, in: &state)
                metrics.running.increment()
                metrics.wait.record(Self.duration(event.time.timeIntervalSince(readySince)))
            case .succeeded, .failed, .retrying, .cancelled, .interrupted, .skipped, .blocked:
                if event.kind == .retrying {
                    state.ready[job] = event.time.addingTimeInterval(event.delay?.seconds ?? 0)
                } else {
                    state.ready[job] = nil
                }
                guard let running = state.running.removeValue(forKey: job) else { return }
                let metrics = metrics(of: running.pipeline, in: &state)
                metrics.running.decrement()
                metrics.duration.record(Self.duration(event.time.timeIntervalSince(running.since)))
                state.ended.increment([job, running.pipeline, event.kind.rawValue])
            default:
                return
            }
        }
    }

    /// A pipeline's gauge and histograms, made in the registry the first time it is seen.
    private func metrics(of pipeline: String, in state: inout Attempts) -> PipelineMetrics {
        if let known = state.byPipeline[pipeline] { return known }
        let labels = [("pipeline", pipeline)]
        let made = PipelineMetrics(
            running: registry.makeGauge(descriptor: Names.attemptsRunning, labels: labels),
            wait: registry.makeDurationHistogram(
                descriptor: Names.queueWait, labels: labels, buckets: Self.waitBuckets),
            duration: registry.makeDurationHistogram(
                descriptor: Names.attemptDuration, labels: labels, buckets: Self.durationBuckets))
        state.byPipeline[pipeline] = made
        return made
    }

    private static func duration(_ seconds: TimeInterval) -> Duration {
        .nanoseconds(Int64(max(0, seconds) * 1e9))
    }

    // MARK: Store commits

    /// Records how long a commit took to be durable.
    public func recordCommit(_ duration: Duration) {
        commits?.record(duration)
    }

    // MARK: Committed events

    /// Reads the runs as they are now (before following the events).
    func load(from reader: ReadModel) async {
        guard let stored = try? await reader.runs() else { return }
        runs.withLock { runs in
            for run in stored {
                runs.states[run.id] = run.state
                if let job = run.occurrenceOf { runs.occurrences[run.id] = job }
            }
        }
        publishRuns()
    }

    /// Follows a committed event: runs by state, occurrences started, skipped and missed.
    func record(_ event: CommittedEvent, reader: ReadModel) async {
        switch event.change {
        case .run(let id, let state):
            let known = runs.withLock { $0.states[id] != nil }
            runs.withLock { $0.states[id] = state }
            if !known, let record = try? await reader.run(id), let job = record.occurrenceOf {
                runs.withLock { $0.occurrences[id] = job }
                let result: String? =
                    switch state {
                    case .skipped: "skipped"
                    case .missed: "missed"
                    default: "started"
                    }
                if let result {
                    occurrences.withLock { $0.increment([job, result]) }
                }
            }
            publishRuns()
        case .runDeleted(let id):
            runs.withLock {
                $0.states[id] = nil
                $0.occurrences[id] = nil
            }
            publishRuns()
        default:
            return
        }
    }

    private func publishRuns() {
        let counts = runs.withLock { runs in
            var counts: [RunState: Int] = [:]
            for state in runs.states.values { counts[state, default: 0] += 1 }
            return counts
        }
        for state in [RunState.running, .stopped, .succeeded, .failed, .skipped, .missed] {
            registry.makeGauge(descriptor: Names.runs, labels: [("state", state.rawValue)])
                .set(to: Double(counts[state] ?? 0))
        }
    }

    // MARK: SSE clients

    func clientJoined() { sseClients.increment() }

    func clientLeft(dropped: Bool) {
        sseClients.decrement()
        if dropped { sseDropped.increment() }
    }

    // MARK: Scrape

    /// The Prometheus text of every metric, with the pipelines' suspend counts read now: every
    /// pipeline known (the job files', the current run's, those stored), 0 when not suspended.
    func scrape(_ reader: ReadModel) async -> [UInt8] {
        var suspended: [String: Int] = [:]
        for pipeline in attempts.withLock({ Set($0.pipelines.values) }) { suspended[pipeline] = 0 }
        if let current = try? await reader.currentRunID(), let run = try? await reader.run(current) {
            for pipeline in run.pipelineLimits.keys { suspended[pipeline] = 0 }
        }
        if let pipelines = try? await reader.pipelines() {
            for (name, record) in pipelines { suspended[name] = record.suspended }
        }
        for (name, count) in suspended {
            registry.makeGauge(descriptor: Names.pipelineSuspended, labels: [("pipeline", name)])
                .set(to: Double(count))
        }
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        attempts.withLock { $0.ended.emit(into: &buffer) }
        occurrences.withLock { $0.emit(into: &buffer) }
        return buffer
    }
}

/// The metrics' names and help texts: every name starts `jobrunner_`.
private enum Names {
    static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "jobrunner", metricName: metric, unitName: unit, helpText: help)
    }
    static let attemptsTotal = "jobrunner_attempts_total"
    static let attemptsHelp = "Attempts ended, by job, pipeline and outcome"
    static var attemptsRunning: MetricNameDescriptor {
        name("attempts_running", "", "Attempts under way, by pipeline")
    }
    static var attemptDuration: MetricNameDescriptor {
        name("attempt_duration", "seconds", "From an attempt's start to its end")
    }
    static var queueWait: MetricNameDescriptor {
        name("attempt_queue_wait", "seconds", "From a job being ready to its attempt's start")
    }
    static let occurrencesTotal = "jobrunner_occurrences_total"
    static let occurrencesHelp = "Periodic occurrences started, skipped (overlap) and missed (catchUp)"
    static var runs: MetricNameDescriptor { name("runs", "", "Stored runs by state") }
    static var storeCommit: MetricNameDescriptor {
        name("store_commit", "seconds", "From a commit's submission to the store to its being durable")
    }
    static var pipelineSuspended: MetricNameDescriptor {
        name("pipeline_suspended", "", "A pipeline's suspend count")
    }
    static var eventClients: MetricNameDescriptor {
        name("http_event_clients", "", "SSE clients following /events")
    }
    static var eventClientsDropped: MetricNameDescriptor {
        name("http_event_clients_dropped", "total", "SSE clients dropped for falling behind")
    }
}

/// Counts the runner's events into ``DashboardMetrics``.
private struct MetricsObserver: RunObserver {
    let metrics: DashboardMetrics
    func record(_ event: RunEvent) { metrics.record(event) }
}
