#if os(Linux)
import Foundation
import Glibc

/// Confines this process to one CPU: every thread it has now, and the
/// threads they create later, which inherit the mask.
///
/// The `...OneCPU` benchmarks run in processes of their own (package-benchmark
/// runs each benchmark in its own process), so the confinement ends with the
/// benchmark. On one CPU, a value handed from one thread to another costs a
/// context switch; on several CPUs of a virtual machine whose idle CPUs halt,
/// it may also wake a halted CPU, which costs tens of microseconds.
///
/// - Returns: The CPU, or nil when the process may not change its threads'
///   CPUs (it then runs as before).
@discardableResult
func confineProcessToOneCPU() -> Int? {
    // glibc's affinity calls, which Swift's Glibc module does not import
    // (they need _GNU_SOURCE), on a 1 024-bit mask: glibc's `cpu_set_t`.
    typealias AffinityCall = @convention(c) (pid_t, Int, UnsafeMutableRawPointer) -> Int32
    guard let getSymbol = dlsym(nil, "sched_getaffinity"), let setSymbol = dlsym(nil, "sched_setaffinity") else {
        return nil
    }
    let getAffinity = unsafeBitCast(getSymbol, to: AffinityCall.self)
    let setAffinity = unsafeBitCast(setSymbol, to: AffinityCall.self)
    var allowed = [UInt64](repeating: 0, count: 16)
    let size = allowed.count * MemoryLayout<UInt64>.size
    guard allowed.withUnsafeMutableBytes({ getAffinity(0, size, $0.baseAddress!) }) == 0,
        let word = allowed.firstIndex(where: { $0 != 0 })
    else { return nil }
    let cpu = word * 64 + allowed[word].trailingZeroBitCount
    var one = [UInt64](repeating: 0, count: 16)
    one[word] = 1 << UInt64(cpu % 64)
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    for thread in threads.compactMap({ pid_t($0) }) {
        guard one.withUnsafeMutableBytes({ setAffinity(thread, size, $0.baseAddress!) }) == 0 else { return nil }
    }
    return cpu
}
#endif
