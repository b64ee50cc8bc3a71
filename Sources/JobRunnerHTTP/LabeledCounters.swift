/// A counter family with a label set per job (`jobrunner_attempts_total`,
/// `jobrunner_occurrences_total`), counted here and written into a scrape after the registry's
/// families.
///
/// Not made in swift-prometheus's registry: its 2.4 registry copies a family's whole table of
/// label sets to add one, so a counter per job costs O(n) each and O(n²) for a run's n jobs
/// (`perf` of a 100,000-job `serve --http`: 78 % of its CPU in those copies, 108 jobs/s instead
/// of thousands). Here a new label set is one dictionary insert.
struct LabeledCounters: Sendable {
    let name: String
    let help: String
    let labelNames: [String]
    /// Each label set's values and count, in the order first counted (a scrape's order).
    private var series: [(values: [String], count: Int)] = []
    /// Where each label set is in `series`, by its values joined with NUL (no label value has one).
    private var index: [String: Int] = [:]

    init(name: String, help: String, labelNames: [String]) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// Adds `amount` to the count of the label set `values` (one value per label name).
    mutating func increment(_ values: [String], by amount: Int = 1) {
        let key = values.joined(separator: "\u{0}")
        if let position = index[key] {
            series[position].count += amount
        } else {
            index[key] = series.count
            series.append((values, amount))
        }
    }

    /// The count of one label set; 0 when never counted.
    func count(_ values: [String]) -> Int {
        index[values.joined(separator: "\u{0}")].map { series[$0].count } ?? 0
    }

    /// Appends the family in Prometheus' text format (version 0.0.4): `# HELP`, `# TYPE`, then
    /// a line per label set. Nothing when no label set was counted, as the registry does.
    func emit(into buffer: inout [UInt8]) {
        guard !series.isEmpty else { return }
        buffer.append(contentsOf: "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) counter\n".utf8)
        for (values, count) in series {
            buffer.append(contentsOf: name.utf8)
            buffer.append(UInt8(ascii: "{"))
            for (position, (label, value)) in zip(labelNames, values).enumerated() {
                if position > 0 { buffer.append(UInt8(ascii: ",")) }
                buffer.append(contentsOf: label.utf8)
                buffer.append(contentsOf: "=\"".utf8)
                Self.appendEscaped(value, to: &buffer)
                buffer.append(UInt8(ascii: "\""))
            }
            buffer.append(contentsOf: "} \(count)\n".utf8)
        }
    }

    /// A label value as the text format wants it: backslash, double quote and line feed escaped.
    private static func appendEscaped(_ value: String, to buffer: inout [UInt8]) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\""): buffer.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\n"): buffer.append(contentsOf: "\\n".utf8)
            default: buffer.append(byte)
            }
        }
    }

    /// A `# HELP` text: backslash and line feed escaped.
    private static func escapedHelp(_ help: String) -> String {
        help.replacing("\\", with: "\\\\").replacing("\n", with: "\\n")
    }
}
