/// An error that ends a differences observation because of the data it
/// observes, rather than a programming error.
///
/// ```swift
/// do {
///     for try await difference in observation.values(in: dbQueue) { ... }
/// } catch let error as DifferencesObservationError where error.kind == .duplicateIdentifier {
///     print(error)  // the ids of the elements are not unique
/// }
/// ```
public struct DifferencesObservationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Equatable, Sendable {
        /// Two elements of one value have the same id (for
        /// `trackingSetDifferences`, two rows have the same primary key,
        /// which a join or NULL keys can cause).
        case duplicateIdentifier
        /// A row or an initial record lacks a column of the primary key:
        /// the request's selection, or the record's encoding, must include
        /// every primary key column.
        case missingPrimaryKeyColumn
    }

    /// What went wrong.
    public var kind: Kind

    /// A message that names the operator, the table or the id at fault, and
    /// what to change.
    public var message: String

    /// Creates an error.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
