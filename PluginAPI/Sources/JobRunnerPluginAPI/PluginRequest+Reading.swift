import Foundation
import JobRunnerJSON

extension PluginRequest where Parameters: Decodable {
    /// Decodes a request: the members around the parameters with `JSONReader`, the parameters
    /// themselves with `JSONDecoder` (not at all for `NoParameters`). Anything unusual, or
    /// parameters that do not decode, and the whole request is decoded with `JSONDecoder`, whose
    /// value or error stands, as before the quick way existed.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws -> Self {
        if let envelope = RequestEnvelope(quickJSON: bytes),
            let parameters = quickParameters(UnsafeRawBufferPointer(rebasing: bytes[envelope.parameters]))
        {
            return Self(
                handler: envelope.handler, job: envelope.job, run: envelope.run, attempt: envelope.attempt,
                parameters: parameters, needs: envelope.needs, log: envelope.log, workdir: envelope.workdir)
        }
        return try JSONDecoder().decode(Self.self, from: Data(bytes))
    }

    private static func quickParameters(_ bytes: UnsafeRawBufferPointer) -> Parameters? {
        if let none = NoParameters() as? Parameters { return none }
        return try? JSONDecoder().decode(Parameters.self, from: Data(bytes))
    }
}

/// A request's members but its parameters, read with `JSONReader`, and where the parameters
/// (an object) lie.
struct RequestEnvelope {
    var handler: String
    var job: String
    var run: String
    var attempt: Int
    var needs: [String: [String: String]]
    var log: String?
    var workdir: String
    /// The bytes of the `parameters` object.
    var parameters: Range<Int>

    /// Nil when anything is unusual (see `JSONReader`), a member is missing, or the parameters are
    /// not an object.
    init?(quickJSON bytes: UnsafeRawBufferPointer) {
        var reader = JSONReader(bytes)
        var handler: String?
        var job: String?
        var run: String?
        var attempt: Int?
        var needs: [String: [String: String]]?
        var log: String??
        var workdir: String?
        var parameters: Range<Int>?
        var others = Set<[UInt8]>()
        /// Reads a string member once.
        func once<Value>(
            _ member: inout Value?, _ read: (inout JSONReader) -> Value?, _ reader: inout JSONReader
        )
            -> Bool
        {
            guard member == nil, let value = read(&reader) else { return false }
            member = value
            return true
        }
        let read = reader.object { reader, key in
            if key.equals("handler") { return once(&handler, { $0.string() }, &reader) }
            if key.equals("job") { return once(&job, { $0.string() }, &reader) }
            if key.equals("run") { return once(&run, { $0.string() }, &reader) }
            if key.equals("attempt") { return once(&attempt, { $0.integer() }, &reader) }
            if key.equals("needs") { return once(&needs, { $0.map { $0.stringMap() } }, &reader) }
            if key.equals("log") { return once(&log, { $0.nullable { $0.string() } }, &reader) }
            if key.equals("workdir") { return once(&workdir, { $0.string() }, &reader) }
            // A hook's call, rare: read whole by `JSONDecoder`.
            if key.equals("notify") { return false }
            if key.equals("parameters") {
                guard parameters == nil, reader.peek() == UInt8(ascii: "{") else { return false }
                let start = reader.index
                guard reader.skipValue() else { return false }
                parameters = start..<reader.index
                return true
            }
            return others.insert(Array(key.bytes)).inserted && reader.skipValue()
        }
        guard read, reader.atEnd(), let handler, let job, let run, let attempt, let needs, let workdir,
            let parameters
        else { return nil }
        self.handler = handler
        self.job = job
        self.run = run
        self.attempt = attempt
        self.needs = needs
        self.log = log ?? nil
        self.workdir = workdir
        self.parameters = parameters
    }
}
