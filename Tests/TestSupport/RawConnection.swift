import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP connection to `127.0.0.1` that sends whatever bytes a test gives
/// it, as an attacker or a broken client would, and reads what comes back
/// with a deadline.
///
/// Any thread may read while another closes: the socket's number is read
/// anew at each turn, and `recv` runs under the lock that `close` and
/// `reset` take. (Read without it, a reader late by a moment would `recv`
/// on a number the close had freed, which the next socket of the process,
/// a client's or one the server accepted, takes at once: the reader would
/// steal that socket's bytes.)
public final class RawConnection: Sendable {
    /// The socket's number; -1 once closed.
    private let descriptor: Locked<Int32>

    /// Connects to `127.0.0.1:port`.
    ///
    /// - Parameter receiveBuffer: The socket's receive buffer size, when
    ///   small: a client that does not read makes the server's writes wait
    ///   at once.
    public init(port: Int, receiveBuffer: Int32? = nil) throws {
        descriptor = Locked(try connectToLoopback(port: port) { descriptor in
            guard var size = receiveBuffer else { return }
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        })
    }

    deinit { close() }

    /// Sends `bytes`; false when the connection no longer takes them.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return false }
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                sent += count
            }
            return true
        }
    }

    /// Sends `text` as UTF-8.
    @discardableResult
    public func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// What the peer sent until it closed the connection, or until
    /// `timeout`: `isClosed` says which (a `close` or `reset` of this
    /// connection meanwhile counts as a close).
    public func readUntilClosed(timeout: Duration) -> (bytes: [UInt8], isClosed: Bool) {
        read(timeout: timeout) { _ in false }
    }

    /// What the peer sent until `condition` holds for all of it, the
    /// connection closes, or `timeout` passes: `isClosed` says whether it
    /// closed.
    public func read(timeout: Duration, until condition: ([UInt8]) -> Bool) -> (bytes: [UInt8], isClosed: Bool) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !condition(received) {
            let left = deadline - clock.now
            guard left > .zero else { return (received, false) }
            let socketNumber = descriptor.value
            guard socketNumber >= 0 else { return (received, true) }
            // At most 20 ms: a poll of a number closed (and taken again)
            // meanwhile ends soon.
            let milliseconds = min(20, max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            var poller = pollfd(fd: socketNumber, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(milliseconds))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let (count, code) = buffer.withUnsafeMutableBytes { bytes in
                descriptor.withLock { current -> (Int, Int32) in
                    // Closed since the poll began: the number may be another socket's now.
                    guard current == socketNumber else { return (0, 0) }
                    let count = recv(current, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT))
                    return (count, errno)
                }
            }
            if count < 0, code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
            // A reset is a close too.
            guard count > 0 else { return (received, true) }
            received += buffer[0..<count]
        }
        return (received, false)
    }

    /// `read(timeout:until:)` on a thread of its own: the caller's task
    /// waits without holding a thread of the cooperative pool, which a
    /// server in the same process needs to answer.
    public func readOnItsOwnThread(
        timeout: Duration, until condition: @escaping @Sendable ([UInt8]) -> Bool
    ) async -> (bytes: [UInt8], isClosed: Bool) {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.read(timeout: timeout, until: condition)) }.start()
        }
    }

    /// The response's text until the peer closed or `timeout` passed.
    public func responseText(timeout: Duration) -> (text: String, isClosed: Bool) {
        let (bytes, isClosed) = readUntilClosed(timeout: timeout)
        return (String(decoding: bytes, as: UTF8.self), isClosed)
    }

    /// Ends the connection with a TCP reset (`SO_LINGER` of zero), as a
    /// client that crashed or a middlebox would.
    public func reset() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// Closes the connection. The shutdown first wakes a reader polling
    /// the socket at once.
    public func close() {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            shutdown(descriptor, Int32(SHUT_RDWR))
            Glibc.close(descriptor)
            descriptor = -1
        }
    }
}

/// The status code of an HTTP/1.1 response's text, or nil.
public func httpStatus(of response: String) -> Int? {
    guard response.hasPrefix("HTTP/1.1 ") else { return nil }
    return Int(response.dropFirst(9).prefix(3))
}

/// A TCP socket connected to `127.0.0.1:port`; `configure` runs on the
/// socket before it connects (a receive buffer size, say).
func connectToLoopback(port: Int, configure: (Int32) -> Void = { _ in }) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw SSEClientError("socket: errno \(errno)") }
    configure(descriptor)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        let code = errno
        Glibc.close(descriptor)
        throw SSEClientError("connect to port \(port): errno \(code)")
    }
    return descriptor
}
