/// Waiting work of many owners, served round robin: each owner with work waiting gets its turn in every round, so
/// one owner's burst waits behind itself rather than in front of everyone.
///
/// An ingest token ships inside every copy of an app: the writer's queue is kept per token, one token may hold at
/// most a share of it, and a batch takes one item of each owner in turn, up to a count and a cost (the lines it
/// holds), so that a huge bundle commits with little else and the small bundles of other apps are not held behind
/// it. A pure value: ``IngestQueue`` guards it with its lock.
struct FairQueue<Element> {
    private var queues: [String: [Element]] = [:]
    /// Owners with work waiting, in the order they are served next.
    private var order: [String] = []
    /// Everything waiting, across owners.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// How many items `owner` has waiting.
    func count(of owner: String) -> Int { queues[owner]?.count ?? 0 }

    mutating func append(_ element: Element, owner: String) {
        if queues[owner] == nil {
            queues[owner] = [element]
            order.append(owner)
        } else {
            queues[owner]!.append(element)
        }
        count += 1
    }

    /// The next batch: round robin over the owners, one item each per turn, until `maxCount` items or until their
    /// `cost` reaches `maxCost`; at least one item when any waits. The owner after the last one served starts the
    /// next batch.
    mutating func next(maxCount: Int, maxCost: Int, cost: (Element) -> Int) -> [Element] {
        var batch: [Element] = []
        var spent = 0
        while !order.isEmpty, batch.count < max(1, maxCount) {
            let owner = order.removeFirst()
            let element = queues[owner]!.removeFirst()
            let itemCost = cost(element)
            // An item that would take the batch past its cost waits for the next one (unless the batch is empty).
            if !batch.isEmpty, spent + itemCost > maxCost {
                queues[owner]!.insert(element, at: 0)
                order.insert(owner, at: 0)
                break
            }
            batch.append(element)
            spent += itemCost
            count -= 1
            if queues[owner]!.isEmpty {
                queues[owner] = nil
            } else {
                order.append(owner)
            }
            if spent >= maxCost { break }
        }
        return batch
    }
}

extension FairQueue: Sendable where Element: Sendable {}
