import JobRunnerJSON

extension JSONWriter {
    /// Writes `value`: objects with their members in key order, so equal values are written
    /// alike.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .int(let number): integer(number)
        case .double(let number): double(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted() {
                key(name)
                self.value(members[name] ?? .null)
            }
            endObject()
        }
    }

    /// A member whose value is `value`.
    public mutating func member(_ name: String, _ value: JSONValue) {
        key(name)
        self.value(value)
    }
}
