/// One thing the diagnosis found: a code, a sentence, the records it rests on, and what to change.
public struct Finding: Sendable, Hashable {
    public var code: Cause
    public var message: String
    public var evidence: [TimelineEntry]
    public var fix: String

    public init(_ code: Cause, _ message: String, evidence: [TimelineEntry], fix: String) {
        self.code = code
        self.message = message
        self.evidence = evidence
        self.fix = fix
    }
}

/// The answer to "why": every finding, the primary cause first.
public struct Diagnosis: Sendable, Hashable {
    public var cause: Cause
    /// Ordered by ``Cause`` priority; the first is the primary cause.
    public var findings: [Finding]
}
