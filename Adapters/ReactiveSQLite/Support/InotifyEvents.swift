#if os(Linux)
import Glibc

/// Reading the events of an inotify descriptor, for the two users of
/// inotify: `DatabaseFileEvents` (a database's files were written, to wake
/// the external-change detector) and `FileWriteCounter` (how many writes a
/// file had, to validate a read without a lock).
enum InotifyEvents {
    /// Reads every event queued on `descriptor`, which must be
    /// non-blocking, and calls `body` with each one and the bytes of its
    /// name up to the first NUL (valid during the call only; empty for an
    /// event of a watched file rather than of a file in a watched
    /// directory). Reads into a buffer on the stack: no allocation.
    ///
    /// - Complexity: O(n), where n is the number of events queued.
    static func readAll(from descriptor: Int32, _ body: (inotify_event, UnsafeRawBufferPointer) -> Void) {
        let headerSize = MemoryLayout<inotify_event>.size
        // Room for an event with the longest name (NAME_MAX, 255 bytes,
        // and its NUL), and for many of a watched file's (no name).
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: MemoryLayout<inotify_event>.alignment) { buffer in
            while true {
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                guard count > 0 else { return }
                var offset = 0
                while offset + headerSize <= count {
                    let event = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameStart = offset + headerSize
                    let name = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<min(count, nameStart + Int(event.len))])
                    body(event, UnsafeRawBufferPointer(rebasing: name.prefix { $0 != 0 }))
                    offset = nameStart + Int(event.len)
                }
            }
        }
    }
}
#endif
