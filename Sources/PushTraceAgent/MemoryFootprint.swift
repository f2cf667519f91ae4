import Foundation

#if canImport(Darwin)
    @preconcurrency import Darwin
#endif

/// The process's memory footprint in bytes: what iOS weighs against an extension's limit (about 24 MB for a
/// service extension). `phys_footprint` on Apple platforms, the resident set on Linux.
enum MemoryFootprint {
    static func current() -> Int64? {
        #if canImport(Darwin)
            var info = task_vm_info_data_t()
            var count = mach_msg_type_number_t(MemoryLayout<task_vm_info_data_t>.size / MemoryLayout<natural_t>.size)
            let status = withUnsafeMutablePointer(to: &info) {
                $0.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
                    task_info(mach_task_self_, task_flavor_t(TASK_VM_INFO), $0, &count)
                }
            }
            return status == KERN_SUCCESS ? Int64(info.phys_footprint) : nil
        #else
            guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
            let fields = statm.split(separator: " ")
            guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
            return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
        #endif
    }
}
