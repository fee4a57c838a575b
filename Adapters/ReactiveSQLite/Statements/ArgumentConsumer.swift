
/// Hands out the values of `StatementArguments` to the parameters of one or
/// several statements, and reports the values nobody used.
struct ArgumentConsumer {
    let arguments: StatementArguments
    private var nextPositional = 0
    private var usedNames: Set<String> = []

    init(_ arguments: StatementArguments) {
        self.arguments = arguments
    }

    /// The value for a parameter: the named value when there is one, else the
    /// next positional value. Nil when there is none.
    mutating func value(forParameterNamed name: String?) -> DatabaseValue? {
        if let name, let value = arguments.namedValues[name] {
            usedNames.insert(name)
            return value
        }
        guard nextPositional < arguments.values.count else { return nil }
        defer { nextPositional += 1 }
        return arguments.values[nextPositional]
    }

    /// Throws when some values were not used by any statement.
    func checkAllConsumed(sql: String, label: String) throws {
        let unusedCount = arguments.values.count - nextPositional
        if unusedCount > 0 {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE,
                message: "too many arguments: \(unusedCount) positional value(s) left unused",
                sql: sql, arguments: arguments, connectionLabel: label)
        }
        if usedNames.count < arguments.namedValues.count {
            let unknown = arguments.namedValues.keys.filter { !usedNames.contains($0) }.sorted()
            throw DatabaseError(
                resultCode: .SQLITE_RANGE,
                message: "unknown argument name(s): \(unknown.joined(separator: ", "))",
                sql: sql, arguments: arguments, connectionLabel: label)
        }
    }
}
