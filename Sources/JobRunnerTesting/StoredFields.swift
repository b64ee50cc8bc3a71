/// The stored properties of a value, as reflection sees them: what a synthesized `Codable`
/// conformance writes, one member per property, under the property's name.
///
/// Tests of a hand-written JSON writer use it to make sure they cover every field: a fixture
/// meant to set them all has no ``unset`` one, and the writer's members are exactly ``names``.
/// A field added to the type later then fails those tests until the writer and the fixture
/// learn about it.
public struct StoredFields {
    /// Every stored property's name, in declaration order.
    public let names: [String]
    /// The names of the optional properties that are nil.
    public let unset: [String]

    /// The stored properties of `value`.
    public init(of value: Any) {
        var names: [String] = []
        var unset: [String] = []
        for child in Mirror(reflecting: value).children {
            guard let label = child.label else { continue }
            names.append(label)
            let inner = Mirror(reflecting: child.value)
            if inner.displayStyle == .optional && inner.children.isEmpty { unset.append(label) }
        }
        self.names = names
        self.unset = unset
    }
}
