/// What every role of a store shares: where it lives, and its driver's errors in the store's own terms.
public protocol StoreAccess: AnyObject, Sendable {
    /// Where the store lives, for logs and messages: a file path, or a database URL without its password.
    var location: String { get }
    /// `error`, as the store threw it, translated to ``StoreError`` where it is one a caller can act on (the
    /// database locked, full, unreachable, a statement refused); anything else as it came.
    func explaining(_ error: any Error) -> any Error
}

extension StoreAccess {
    /// `error` as the store's one error type, or nil when it is not the store's (a bundle's own error, a cancel).
    public func storeError(_ error: any Error) -> StoreError? {
        explaining(error) as? StoreError
    }

    /// Whether `error` means the storage cannot take work now (``StoreError/Code/isUnavailable``) rather than that
    /// this work failed: retrying bundle by bundle would only fail each the same way.
    public func isUnavailable(_ error: any Error) -> Bool {
        storeError(error)?.code.isUnavailable ?? false
    }
}
