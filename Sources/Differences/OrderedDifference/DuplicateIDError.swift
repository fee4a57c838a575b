/// An id that appears twice in one of the collections given to
/// `OrderedDifference`, whose ids must be unique.
public struct DuplicateIDError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One of the two collections of a difference.
    public enum Collection: Sendable, Equatable {
        /// The old collection.
        case old
        /// The new collection.
        case new
    }

    /// The collection that contains the id twice.
    public var collection: Collection
    /// The id, as text.
    public var id: String

    /// Creates an error for `id`, found twice in `collection`.
    public init(collection: Collection, id: String) {
        self.collection = collection
        self.id = id
    }

    /// "OrderedDifference: the new collection contains the id 3 twice. Ids must be unique."
    public var description: String {
        "OrderedDifference: the \(collection) collection contains the id \(id) twice. Ids must be unique."
    }
}
