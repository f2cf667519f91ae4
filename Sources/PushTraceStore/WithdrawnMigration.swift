/// A migration that an earlier build released and a later one took back. A store that ran it is not refused as one
/// a newer pushtrace wrote: the engine undoes what it did and forgets its name, in one transaction, before the
/// migrations it lacks run. The list only grows, as the released migrations do (docs/schema.md).
public struct WithdrawnMigration: Sendable, Equatable {
    /// The name it was recorded under in the store's list of applied migrations.
    public var name: String
    /// Statements that bring a store that ran it back to the schema without it; each may run on a store it never
    /// reached (`IF EXISTS`).
    public var undo: [String]

    public init(name: String, undo: [String]) {
        self.name = name
        self.undo = undo
    }
}
