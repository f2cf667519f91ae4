import Foundation

/// The writer's timing, each named once.
enum IngestTiming {
    /// How long the idle writer waits for a submission before it writes waiting summaries.
    static let summaryPause: TimeInterval = 0.05
    /// How long the idle writer waits for a submission before it settles causes (nothing else to do).
    static let idlePause: TimeInterval = 1
    /// Under steady load (the queue is never idle for long) causes are settled this often all the same.
    static let settleInterval: TimeInterval = 10
    /// The notifications-by-cause gauge is refreshed this soon after causes change, and at least this often (on a
    /// shared database, another server may have settled them).
    static let causeGaugeAfterChange: TimeInterval = 2
    static let causeGaugeInterval: TimeInterval = 10
    /// The gauge counts the notifications first seen in the last 23 hours (the hourly rollup's whole hours).
    static let causeGaugeWindowMs: Int64 = 23 * 3_600_000
    /// Facts of at most this many notifications wait in the backlog (a few megabytes) before they are written.
    static let backlogLimit = 20_000
}
