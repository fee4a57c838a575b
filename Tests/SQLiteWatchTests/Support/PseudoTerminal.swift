import TestSupport
import Foundation

/// A pseudo-terminal, to run a process whose standard output is a terminal
/// (`isatty` is true), and read what it prints there.
final class PseudoTerminal: Sendable {
    /// What the process wrote to the terminal.
    let output = ObservedState(ChildProcess.Output())
    /// The terminal side, given to the child process.
    let secondaryDescriptor: Int32

    init() throws {
        let functions = try TerminalFunctions()
        let primary = functions.openPrimary(O_RDWR | O_NOCTTY)
        guard primary >= 0, functions.grant(primary) == 0, functions.unlock(primary) == 0,
            let name = functions.secondaryName(primary)
        else {
            throw ChildProcessFailure(description: "no pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let secondary = open(name, O_RDWR | O_NOCTTY)
        guard secondary >= 0 else {
            close(primary)
            throw ChildProcessFailure(description: "cannot open \(String(cString: name))")
        }
        secondaryDescriptor = secondary
        // Reading ends with EIO once no process has the terminal open.
        ChildProcess.read(primary, into: output)
    }

    /// Closes this process's copy of the terminal side, once the child has
    /// it: the reads then end when the child exits.
    func closeSecondary() {
        close(secondaryDescriptor)
    }

    /// Waits until the terminal shows `text`; kills `process` on failure.
    func waitForOutput(containing text: String, of process: ChildProcess) async throws {
        let output = await output.wait(until: { $0.isClosed || $0.text.contains(text) }, timeout: ChildProcess.timeout)
        guard let output, output.text.contains(text) else {
            process.signal(SIGKILL)
            throw ChildProcessFailure(description: "no \"\(text)\" on the terminal: \(self.output.value.text)")
        }
    }
}

/// The C library's pseudo-terminal functions (`posix_openpt`, `grantpt`,
/// `unlockpt`, `ptsname`), which the Glibc module does not import (they
/// need `_XOPEN_SOURCE`): looked up by name in the running program.
private struct TerminalFunctions {
    let openPrimary: @convention(c) (Int32) -> Int32
    let grant: @convention(c) (Int32) -> Int32
    let unlock: @convention(c) (Int32) -> Int32
    let secondaryName: @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

    init() throws {
        let program = dlopen(nil, RTLD_NOW)
        func lookUp<Function>(_ name: String, as type: Function.Type) throws -> Function {
            guard let symbol = dlsym(program, name) else {
                throw ChildProcessFailure(description: "the C library has no \(name)")
            }
            return unsafeBitCast(symbol, to: type)
        }
        openPrimary = try lookUp("posix_openpt", as: (@convention(c) (Int32) -> Int32).self)
        grant = try lookUp("grantpt", as: (@convention(c) (Int32) -> Int32).self)
        unlock = try lookUp("unlockpt", as: (@convention(c) (Int32) -> Int32).self)
        secondaryName = try lookUp("ptsname", as: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
    }
}
