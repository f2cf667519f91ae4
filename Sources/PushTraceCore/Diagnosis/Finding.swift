/// One thing the diagnosis found: a code, a sentence, the records it rests on, and what to change.
public struct Finding: Sendable, Hashable {
    public var code: Cause
    public var message: String
    public var evidence: [TimelineEntry]
    public var fix: String
    /// Another notification the finding rests on (the one APNs kept instead, the one that replaced it), by ID.
    public var related: String?

    public init(_ code: Cause, _ message: String, evidence: [TimelineEntry], fix: String, related: String? = nil) {
        self.code = code
        self.message = message
        self.evidence = evidence
        self.fix = fix
        self.related = related
    }
}

/// The answer to "why": every finding, the primary cause first.
public struct Diagnosis: Sendable, Hashable {
    public var cause: Cause
    /// Ordered by ``Cause`` priority; the first is the primary cause.
    public var findings: [Finding]
}
