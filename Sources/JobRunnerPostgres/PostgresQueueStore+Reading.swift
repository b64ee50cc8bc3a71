import Foundation
import JobRunnerCore
import Logging
import PostgresNIO

extension PostgresQueueStore {
    /// The rows of one statement as text columns, decoded by `decode`.
    func rows<Row: Sendable>(
        _ sql: String, on connection: PostgresConnection,
        with bind: (inout PostgresBindings) -> Void = { _ in },
        _ decode: (PostgresRow) throws -> Row
    ) async throws -> [Row] {
        var binds = PostgresBindings()
        bind(&binds)
        var result: [Row] = []
        for try await row in try await connection.query(
            PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        {
            result.append(try decode(row))
        }
        return result
    }

    /// A stored record, decoded; a record that does not decode means a damaged store.
    func record<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw StoreError(
                .corrupt, "the store \(url) holds a \(type) that cannot be read (\(error))", cause: error)
        }
    }

    /// One text column.
    static func text(_ row: PostgresRow) throws -> String { try row.decode(String.self) }

    public func currentRunID() async throws(StoreError) -> String? {
        try await transaction("reading the current run", readOnly: true) { connection in
            try await rows(SQL.currentRun, on: connection, Self.text).first
        }
    }

    public func run(id: String) async throws(StoreError) -> RunRecord? {
        try await transaction("reading run \(id)", readOnly: true) { connection in
            try await rows(SQL.run, on: connection, with: { $0.append(id) }, Self.text).first.map {
                try record(RunRecord.self, $0)
            }
        }
    }

    public func snapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try await snapshot(runID: runID, openAttemptsOnly: false)
    }

    /// Reads only the attempts left open (the `open` column), not the others' records.
    public func resumableSnapshot(runID: String) async throws(StoreError) -> RunSnapshot? {
        try await snapshot(runID: runID, openAttemptsOnly: true)
    }

    private func snapshot(runID: String, openAttemptsOnly: Bool) async throws(StoreError) -> RunSnapshot? {
        try await transaction("reading run \(runID)", readOnly: true) { connection in
            guard
                let runText = try await rows(SQL.run, on: connection, with: { $0.append(runID) }, Self.text)
                    .first
            else {
                return nil
            }
            var snapshot = RunSnapshot(run: try record(RunRecord.self, runText))
            for text in try await rows(SQL.jobsOfRun, on: connection, with: { $0.append(runID) }, Self.text) {
                let job = try record(JobRecord.self, text)
                snapshot.jobs[job.jobID] = job
            }
            let attempts = openAttemptsOnly ? SQL.openAttemptsOfRun : SQL.attemptsOfRun
            for text in try await rows(attempts, on: connection, with: { $0.append(runID) }, Self.text) {
                let attempt = try record(AttemptRecord.self, text)
                snapshot.attempts[attempt.jobID, default: []].append(attempt)
            }
            for (jobID, text) in try await rows(
                SQL.outputsOfRun, on: connection, with: { $0.append(runID) },
                { try $0.decode((String, String).self) })
            {
                snapshot.outputs[jobID] = try record([String: String].self, text)
            }
            return snapshot
        }
    }

    /// Every job's state from its column; only the listed jobs' records are read.
    public func overview(
        runID: String, listing: @escaping @Sendable (JobState, RunRecord) -> Bool, withOutputs: Bool
    ) async throws(StoreError) -> RunOverview? {
        try await transaction("reading run \(runID)", readOnly: true) { connection in
            guard
                let runText = try await rows(SQL.run, on: connection, with: { $0.append(runID) }, Self.text)
                    .first
            else {
                return nil
            }
            let run = try record(RunRecord.self, runText)
            var overview = RunOverview(run: run, states: [:], jobs: [:], outputs: [:])
            var listed: [String] = []
            for (jobID, stateText) in try await rows(
                SQL.jobStatesOfRun, on: connection, with: { $0.append(runID) },
                { try $0.decode((String, String).self) })
            {
                guard let state = JobState(rawValue: stateText) else {
                    throw StoreError(
                        .corrupt, "the store \(url) holds job \(jobID) in an unknown state \(stateText)")
                }
                overview.states[jobID] = state
                if listing(state, run) { listed.append(jobID) }
            }
            guard !listed.isEmpty else { return overview }
            for text in try await rows(
                SQL.jobsOfRunNamed, on: connection,
                with: {
                    $0.append(runID)
                    $0.append(listed)
                }, Self.text)
            {
                let job = try record(JobRecord.self, text)
                overview.jobs[job.jobID] = job
            }
            if withOutputs {
                for (jobID, text) in try await rows(
                    SQL.outputsOfRun, on: connection, with: { $0.append(runID) },
                    { try $0.decode((String, String).self) })
                where overview.jobs[jobID] != nil {
                    overview.outputs[jobID] = try record([String: String].self, text)
                }
            }
            return overview
        }
    }

    public func runs() async throws(StoreError) -> [RunRecord] {
        try await transaction("reading the runs", readOnly: true) { connection in
            try await rows(SQL.runs, on: connection, Self.text).map { try record(RunRecord.self, $0) }
        }
    }

    public func pipelines() async throws(StoreError) -> [String: PipelineRecord] {
        try await transaction("reading the pipelines", readOnly: true) { connection in
            var result: [String: PipelineRecord] = [:]
            for text in try await rows(SQL.pipelines, on: connection, Self.text) {
                let pipeline = try record(PipelineRecord.self, text)
                result[pipeline.name] = pipeline
            }
            return result
        }
    }

    public func schedules() async throws(StoreError) -> [String: ScheduleRecord] {
        try await transaction("reading the schedules", readOnly: true) { connection in
            var result: [String: ScheduleRecord] = [:]
            for text in try await rows(SQL.schedules, on: connection, Self.text) {
                let schedule = try record(ScheduleRecord.self, text)
                result[schedule.jobID] = schedule
            }
            return result
        }
    }

    public func requests(runID: String) async throws(StoreError) -> [OperatorRequest] {
        try await transaction("reading the requests", readOnly: true) { connection in
            try await rows(SQL.requestsOfRun, on: connection, with: { $0.append(runID) }, Self.text).map {
                try record(OperatorRequest.self, $0)
            }
        }
    }

    public func outputs(of jobs: [JobInRun]) async throws(StoreError) -> [JobInRun: [String: String]] {
        guard !jobs.isEmpty else { return [:] }
        return try await transaction("reading outputs", readOnly: true) { connection in
            var found: [JobInRun: [String: String]] = [:]
            for (runID, jobID, text) in try await rows(
                SQL.outputsOfJobs, on: connection,
                with: {
                    $0.append(jobs.map(\.runID))
                    $0.append(jobs.map(\.jobID))
                }, { try $0.decode((String, String, String).self) })
            {
                found[JobInRun(runID: runID, jobID: jobID)] = try record([String: String].self, text)
            }
            return found
        }
    }
}
