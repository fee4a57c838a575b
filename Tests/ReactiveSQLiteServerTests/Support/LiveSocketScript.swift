#if Server
import Foundation
import HummingbirdTesting
import HummingbirdWSTesting
import HummingbirdWebSocket
import TestSupport

/// A frame the server sent on a live-query WebSocket.
struct LiveFrame: Sendable {
    var subscription: String?
    var event: String
    var id: String?
    /// The `data` member, as JSON text.
    var data: String

    var error: String? {
        guard event == "error", let object = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
        else { return nil }
        return object["error"] as? String
    }
}

/// Drives one WebSocket of a test: sends messages, and waits for the frames
/// the server sends, which a reading task records.
struct LiveSocketScript: Sendable {
    let outbound: WebSocketOutboundWriter
    let frames: ObservedState<[LiveFrame]>

    func send(_ text: String) async throws {
        try await outbound.write(.text(text))
    }

    /// Waits until the frames satisfy `condition`; throws after `timeout`.
    @discardableResult
    func wait(
        timeout: Duration = .seconds(20), until condition: @escaping @Sendable ([LiveFrame]) -> Bool
    ) async throws -> [LiveFrame] {
        guard let frames = await frames.wait(until: condition, timeout: timeout) else {
            throw SSEClientError("the WebSocket frames did not arrive in time; got \(frames.value.map { "\($0.subscription ?? "-") \($0.event) \($0.data.prefix(80))" })")
        }
        return frames
    }

    /// The replica of one subscription after the frames received so far.
    func replica(of subscription: String, keys: [String], isOrdered: Bool) -> JSONRowReplica {
        var replica = JSONRowReplica(keys: keys, isOrdered: isOrdered)
        for frame in frames.value where frame.subscription == subscription {
            replica.apply(event: frame.event, data: frame.data)
        }
        return replica
    }
}

/// Opens a WebSocket at `path` and runs `script` while a task records frames.
func withLiveSocket(
    _ client: any TestClientProtocol, path: String = "/live",
    _ script: @escaping @Sendable (LiveSocketScript) async throws -> Void
) async throws {
    try await client.ws(path) { inbound, outbound, _ in
        let frames = ObservedState<[LiveFrame]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await message in inbound.messages(maxSize: 1 << 24) {
                    guard case .text(let text) = message,
                        let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                        let event = object["event"] as? String
                    else { continue }
                    let data = object["data"].flatMap { try? JSONSerialization.data(withJSONObject: $0) }
                        .map { String(decoding: $0, as: UTF8.self) } ?? "null"
                    let frame = LiveFrame(
                        subscription: object["subscription"] as? String, event: event, id: object["id"] as? String,
                        data: data)
                    frames.update { $0.append(frame) }
                }
            }
            try await script(LiveSocketScript(outbound: outbound, frames: frames))
            group.cancelAll()
        }
    }
}
#endif
