import JobRunnerCore

extension JobFileParser {
    /// At most this many jobs come from one job's `matrix:` (SPEC 3.1).
    static let maxMatrixJobs = 256

    /// A job's `env:` and `with:` as written, before `${…}` is expanded.
    struct RawValues {
        var environment: [(key: String, value: String, node: Node)] = []
        var with: Node?
    }

    /// One key of `matrix:` and its values: as JSON for `with:`, as text for ids and `${matrix.KEY}`.
    private struct Dimension {
        var key: String
        var keyNode: Node
        var values: [(json: JSONValue, text: String)]
    }

    /// Adds to `file` the jobs one parsed job stands for: itself with `env:` and `with:` expanded,
    /// or, with a `matrix:`, one job per combination of its values (SPEC 3.1). Every job keeps the
    /// locations of the one as written, so a problem in any of them points at the file's text.
    mutating func expand(
        _ job: consuming ParsedJob, raw: RawValues, matrix: Entry?, into file: inout ParsedFile
    ) {
        // Most values hold no `$`: they are kept as read, without a second walk.
        let withExpands = raw.with != nil && Self.containsDollar(.object(job.definition.parameters))
        let environmentExpands = raw.environment.contains { Interpolation.mayExpand($0.value) }
        guard let matrix, let dimensions = parseMatrix(matrix, job: job.definition.id, with: raw.with) else {
            if environmentExpands {
                job.definition.environment = expandEnvironment(raw, Interpolation(environment: environment))
            }
            if withExpands, let with = raw.with {
                job.definition.parameters = expandParameters(with, interpolation(nil))
            }
            file.append(job)
            return
        }
        var combinations: [[(json: JSONValue, text: String)]] = [[]]
        for dimension in dimensions {
            combinations = combinations.flatMap { prefix in dimension.values.map { prefix + [$0] } }
        }
        var ids: [String: String] = [:]
        for combination in combinations {
            let texts = combination.map(\.text)
            let id = ([job.definition.id] + texts.map(Self.idSafe)).joined(separator: "-")
            let shown = texts.joined(separator: ", ")
            if let other = ids[id] {
                reader.error(
                    matrix.keyNode,
                    "matrix values (\(other)) and (\(shown)) both make the job id \(VisibleText.quoted(id)); make the values differ in letters or digits"
                )
                continue
            }
            ids[id] = shown
            if !Self.isValidName(id) {
                reader.error(
                    matrix.keyNode,
                    "matrix makes the job id \(VisibleText.quoted(id)), longer than 128 characters; use shorter values"
                )
            }
            var values: [String: String] = [:]
            for (dimension, value) in zip(dimensions, combination) { values[dimension.key] = value.text }
            let interpolation = interpolation(values)
            var expanded = copy job
            expanded.definition.id = id
            if environmentExpands { expanded.definition.environment = expandEnvironment(raw, interpolation) }
            var parameters =
                withExpands
                ? raw.with.map { expandParameters($0, interpolation) } ?? [:] : job.definition.parameters
            for (dimension, value) in zip(dimensions, combination) { parameters[dimension.key] = value.json }
            expanded.definition.parameters = parameters
            expanded.matrixOf = job.definition.id
            file.append(expanded)
        }
    }

    /// Whether any string in `value` holds a `$`.
    private static func containsDollar(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): return Interpolation.mayExpand(text)
        case .array(let items): return items.contains(where: containsDollar)
        case .object(let object): return object.values.contains(where: containsDollar)
        default: return false
        }
    }

    private func interpolation(_ matrix: [String: String]?) -> Interpolation {
        Interpolation(environment: environment, matrix: matrix)
    }

    /// `matrix:`'s keys in file order, each with a non-empty list of plain values; nil (with the
    /// problems reported) when it cannot be used.
    private mutating func parseMatrix(_ entry: Entry, job: String, with: Node?) -> [Dimension]? {
        guard let fields = reader.entries(entry.value, what: "matrix") else { return nil }
        guard !fields.isEmpty else {
            reader.error(
                entry.keyNode,
                "matrix of job \(VisibleText.quoted(job)) has no keys; give it lists, like matrix: { os: [debian, alpine] }"
            )
            return nil
        }
        var withKeys = Set<String>()
        if let with, reader.tree.kind(with) == .mapping {
            var scratch = NodeReader(file: reader.file, tree: reader.tree)
            withKeys = Set((scratch.entries(with, what: "with") ?? []).map(\.key))
        }
        var dimensions: [Dimension] = []
        var count = 1
        var usable = true
        for field in fields {
            let items = reader.tree.items(field.value)
            guard reader.tree.kind(field.value) == .sequence, !items.isEmpty else {
                reader.error(
                    field.value,
                    "matrix key \(VisibleText.quoted(field.key)) must be a non-empty list of values, like [debian, alpine]"
                )
                usable = false
                continue
            }
            if withKeys.contains(field.key) {
                reader.error(
                    field.keyNode,
                    "matrix key \(VisibleText.quoted(field.key)) is also a key of with:; the matrix sets it in with:, so keep one of them"
                )
                usable = false
            }
            var values: [(json: JSONValue, text: String)] = []
            for item in items {
                guard let text = reader.tree.text(item), !reader.isNull(item) else {
                    let what =
                        reader.isNull(item)
                        ? "empty (null); write a value there or remove the empty item"
                        : "a map or a list"
                    reader.error(
                        item,
                        "each value of matrix key \(VisibleText.quoted(field.key)) must be a plain value (a word or a number); this one is \(what)"
                    )
                    usable = false
                    continue
                }
                values.append((matrixJSON(item, text: text), text))
            }
            count =
                count.multipliedReportingOverflow(by: items.count).overflow ? Int.max : count * items.count
            dimensions.append(Dimension(key: field.key, keyNode: field.keyNode, values: values))
        }
        if count > Self.maxMatrixJobs {
            reader.error(
                entry.keyNode,
                "matrix of job \(VisibleText.quoted(job)) makes \(count) jobs; at most \(Self.maxMatrixJobs) per job, so split it"
            )
            return nil
        }
        return usable ? dimensions : nil
    }

    /// A matrix value as it goes into `with:`: whole numbers and true/false typed, anything else
    /// as written (so `1.20` stays `1.20`, not the number 1.2).
    private func matrixJSON(_ node: Node, text: String) -> JSONValue {
        if let value = reader.plainBool(node) { return .bool(value) }
        if let value = reader.plainInt(node) { return .int(value) }
        return .string(text)
    }

    /// A value as it stands in a job id: every character other than letters, digits, `_`, `.`
    /// and `-` made `-`.
    static func idSafe(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    switch scalar {
                    case "A"..."Z", "a"..."z", "0"..."9", "_", ".", "-": return scalar
                    default: return "-"
                    }
                }))
    }

    /// `env:` with `${…}` expanded; a value that cannot be is reported at its place and left out.
    private mutating func expandEnvironment(_ raw: RawValues, _ interpolation: Interpolation) -> [String:
        String]
    {
        var result: [String: String] = [:]
        for variable in raw.environment {
            switch interpolation.expand(variable.value) {
            case .success(let value): result[variable.key] = value
            case .failure(let failure):
                reader.error(
                    variable.node, "env value of \(VisibleText.quoted(variable.key)): \(failure.message)")
            }
        }
        return result
    }

    /// `with:` as JSON, its strings with `${…}` expanded.
    private mutating func expandParameters(_ node: Node, _ interpolation: Interpolation) -> [String:
        JSONValue]
    {
        // Problems of the map itself were reported when the job was read; only expansion's are new.
        var scratch = NodeReader(file: reader.file, tree: reader.tree)
        guard case .object(let object) = expandJSON(node, interpolation, scratch: &scratch, path: "") else {
            return [:]
        }
        return object
    }

    /// - Parameter path: where `node` is within `with:`, as the error names it (`key`,
    ///   `key.inner`, `key[0]`).
    private mutating func expandJSON(
        _ node: Node, _ interpolation: Interpolation, scratch: inout NodeReader, path: String
    ) -> JSONValue {
        switch reader.tree.kind(node) {
        case .scalar:
            let value = scratch.json(node)
            guard case .string(let string) = value, Interpolation.mayExpand(string) else { return value }
            switch interpolation.expand(string) {
            case .success(let text): return .string(text)
            case .failure(let failure):
                reader.error(node, "with value of \(VisibleText.quoted(path)): \(failure.message)")
                return .string(string)
            }
        case .sequence:
            var items: [JSONValue] = []
            for (index, item) in reader.tree.items(node).enumerated() {
                items.append(expandJSON(item, interpolation, scratch: &scratch, path: "\(path)[\(index)]"))
            }
            return .array(items)
        case .mapping:
            var object: [String: JSONValue] = [:]
            for entry in scratch.entries(node, what: "this map") ?? [] {
                let inner = path.isEmpty ? entry.key : path + "." + entry.key
                object[entry.key] = expandJSON(entry.value, interpolation, scratch: &scratch, path: inner)
            }
            return .object(object)
        }
    }
}
