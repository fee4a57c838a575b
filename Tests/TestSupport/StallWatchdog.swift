import Foundation

/// A diagnostic for test runs on a loaded machine: finds out what holds
/// Swift's cooperative pool when every test waiting for it times out.
///
/// Off unless `REACTIVESQLITE_STALL_REPORTS` names a directory. Then a
/// thread of its own (never a pool thread) starts a detached task every
/// 250 ms and waits for it to run. A task that has not run after three
/// seconds means that every thread of the pool is held (the pool has as
/// many threads as the machine has cores); the watchdog then writes the
/// stacks of all threads of the process, taken by `gdb`, to a file of that
/// directory, and the stall's length once the task has run. The threads
/// inside test code in those stacks are what holds the pool.
///
/// Started by the first `Recorder` or child process of a run: nearly
/// every test that waits makes one.
public enum StallWatchdog {
    /// Starts the watchdog once, when the environment asks for it.
    public static func startIfRequested() {
        _ = started
    }

    private static let started: Bool = {
        guard let directory = ProcessInfo.processInfo.environment["REACTIVESQLITE_STALL_REPORTS"] else { return false }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let thread = Thread { watch(reportingTo: directory) }
        thread.name = "stall watchdog"
        thread.start()
        return true
    }()

    private static func watch(reportingTo directory: String) {
        let processID = ProcessInfo.processInfo.processIdentifier
        var reports = 0
        while true {
            Thread.sleep(forTimeInterval: 0.25)
            let ran = DispatchSemaphore(value: 0)
            let start = Date()
            Task.detached { ran.signal() }
            guard ran.wait(timeout: .now() + 3) == .timedOut else { continue }
            let name = "\(directory)/stall-\(processID)-\(Int(start.timeIntervalSince1970)).txt"
            if reports < 20 {
                reports += 1
                let stacks = try? SpawnedProcess.runBlocking(
                    "/usr/bin/gdb", ["-p", "\(processID)", "-batch", "-ex", "thread apply all bt 40"],
                    timeout: .seconds(120))
                _ = FileManager.default.createFile(atPath: name, contents: Data((stacks?.output ?? "").utf8))
            }
            ran.wait()
            let line = "stall of \(String(format: "%.1f", Date().timeIntervalSince(start))) s from \(start)\n"
            let log = "\(directory)/stalls-\(processID).txt"
            if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
            if let handle = FileHandle(forWritingAtPath: log) {
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                handle.closeFile()
            }
        }
    }
}
