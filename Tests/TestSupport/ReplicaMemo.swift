import Foundation

/// The streams of many clients of one server, recorded cheaply and replayed
/// once per distinct stream.
///
/// The clients of one server receive the same events, byte for byte, unless
/// one falls behind (it then gets a merged difference). A client records
/// each event it receives (`record(_:from:)`: a hash and a lookup, no
/// parsing), which moves it from one state to the next; a state is the
/// sequence of events that led to it, shared by every client that received
/// the same sequence. The replica of a state is built on demand
/// (`replica(at:)`), by applying its events to its parent's replica, once.
/// So 160 clients of a busy server cost what the few distinct streams cost,
/// while each client's replica is still exactly what *its own* stream
/// builds. (Parsing each client's events as they came made the test
/// process the bottleneck: clients fell behind, got merged differences,
/// parsed more.)
public final class ReplicaMemo: Sendable {
    private struct Transition: Hashable {
        var from: Int
        var event: String
    }

    private struct Memory {
        /// The parent state and the event of each state but the first.
        var steps: [Int: (parent: Int, event: String)] = [:]
        var transitions: [Transition: Int] = [:]
        var replicas: [Int: JSONRowReplica] = [:]
        var nextState = 1
    }

    private let memory = Locked(Memory())
    private let apply: @Sendable (inout JSONRowReplica, String) -> Void

    /// A memo whose first state is `initial`, and whose events `apply`
    /// applies to a replica.
    public init(_ initial: JSONRowReplica, apply: @escaping @Sendable (inout JSONRowReplica, String) -> Void) {
        self.apply = apply
        memory.withLock { $0.replicas[0] = initial }
    }

    /// The first state.
    public var start: Int { 0 }

    /// The state after `event` from `state`.
    public func record(_ event: String, from state: Int) -> Int {
        memory.withLock { memory in
            let transition = Transition(from: state, event: event)
            if let known = memory.transitions[transition] { return known }
            let next = memory.nextState
            memory.nextState += 1
            memory.transitions[transition] = next
            memory.steps[next] = (state, event)
            return next
        }
    }

    /// How many distinct states the clients reached.
    public var stateCount: Int { memory.withLock { $0.nextState } }

    /// The replica of `state`: its parent's, with its event applied.
    public func replica(at state: Int) -> JSONRowReplica {
        memory.withLock { memory in
            // The states from the nearest one already built.
            var chain: [Int] = []
            var current = state
            while memory.replicas[current] == nil, let step = memory.steps[current] {
                chain.append(current)
                current = step.parent
            }
            var replica = memory.replicas[current]!
            for state in chain.reversed() {
                apply(&replica, memory.steps[state]!.event)
                memory.replicas[state] = replica
            }
            return replica
        }
    }
}
