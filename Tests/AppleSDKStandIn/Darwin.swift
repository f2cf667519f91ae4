// swift-format-ignore-file: TypeNamesShouldBeCapitalized

// (The stand-in spells Darwin's C names as the SDK does.)
@_exported import Foundation
// On Apple platforms Foundation includes URLSession; on Linux it is a module of its own.
@_exported import FoundationNetworking
// The parts of Darwin the agent uses beyond POSIX (which Glibc provides here): the Mach call that reads a process's
// memory footprint, and FileManager's App Group container.
@_exported import Glibc

public typealias natural_t = UInt32
public typealias integer_t = Int32
public typealias kern_return_t = Int32
public typealias mach_port_t = UInt32
public typealias task_name_t = mach_port_t
public typealias task_flavor_t = natural_t
public typealias task_info_t = UnsafeMutablePointer<integer_t>
public typealias mach_msg_type_number_t = natural_t
public typealias mach_vm_size_t = UInt64

public let KERN_SUCCESS: kern_return_t = 0
public let TASK_VM_INFO: Int32 = 22
public var mach_task_self_: mach_port_t = 0

/// `struct task_vm_info` (only the fields the agent reads are named; the rest of the layout is padding).
public struct task_vm_info {
    public var virtual_size: mach_vm_size_t = 0
    public var region_count: integer_t = 0
    public var page_size: integer_t = 0
    public var resident_size: mach_vm_size_t = 0
    public var resident_size_peak: mach_vm_size_t = 0
    public var phys_footprint: mach_vm_size_t = 0
    public init() {}
}
public typealias task_vm_info_data_t = task_vm_info

public func task_info(
    _ target_task: task_name_t, _ flavor: task_flavor_t, _ task_info_out: task_info_t!,
    _ task_info_outCnt: UnsafeMutablePointer<mach_msg_type_number_t>!
) -> kern_return_t { fatalError() }

extension URL {
    /// Security-scoped resources (Foundation on Apple platforms).
    public func startAccessingSecurityScopedResource() -> Bool { fatalError() }
    public func stopAccessingSecurityScopedResource() {}
}

extension ProcessInfo {
    /// `performExpiringActivity(withReason:using:)`: the block runs on a queue of its own; called again with `true`
    /// when the system takes the time back.
    public func performExpiringActivity(withReason reason: String, using block: @escaping @Sendable (Bool) -> Void) {}
}

extension FileManager {
    /// `containerURL(forSecurityApplicationGroupIdentifier:)`
    public func containerURL(forSecurityApplicationGroupIdentifier groupIdentifier: String) -> URL? { fatalError() }
}

/// `sysctlbyname(3)`: a system value by name (`hw.model`).
public func sysctlbyname(
    _ name: UnsafePointer<CChar>!, _ oldp: UnsafeMutableRawPointer!, _ oldlenp: UnsafeMutablePointer<Int>!,
    _ newp: UnsafeMutableRawPointer!, _ newlen: Int
) -> Int32 { fatalError() }
