/// One retention pass as every engine runs it: steps of work, each its own short transaction, the totals reported
/// after each, and the pass stopped where the caller's `progress` says so (what was deleted stays deleted).
package struct RetentionPass {
    package private(set) var report = RetentionReport()
    private let progress: ((RetentionReport) -> Bool)?

    package init(progress: ((RetentionReport) -> Bool)?) {
        self.progress = progress
    }

    /// Runs `step` (which adds what it deleted to the report, and answers whether it found anything) until it finds
    /// nothing more; false when `progress` said stop.
    package mutating func untilDone(_ step: (inout RetentionReport) throws -> Bool) throws -> Bool {
        while try step(&report) {
            if progress?(report) == false { return false }
        }
        return true
    }

    /// Runs the pass's last work, which goes whole, and tells `progress` the totals; returns them.
    package mutating func finish(_ last: (inout RetentionReport) throws -> Void) throws -> RetentionReport {
        try last(&report)
        _ = progress?(report)
        return report
    }
}
