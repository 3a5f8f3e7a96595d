import Foundation

/// One streaming `POST /v3/watch` request: etcd's gateway answers with one JSON object per
/// line for as long as the connection lasts. Each line is handed to `onFrame` in order;
/// ``run()`` returns when the stream ends.
final class EtcdWatchConnection: @unchecked Sendable {
    private let request: EtcdHTTPRequest
    private let transport: any EtcdTransport
    private let onFrame: @Sendable ([String: Any]) -> Bool
    private let control = EtcdStreamControl()

    /// - Parameters:
    ///   - request: The watch request.
    ///   - transport: The HTTP transport.
    ///   - onFrame: Called with each frame; return `false` to close the stream.
    init(request: EtcdHTTPRequest, transport: any EtcdTransport, onFrame: @escaping @Sendable ([String: Any]) -> Bool) {
        self.request = request
        self.transport = transport
        self.onFrame = onFrame
    }

    /// Opens the stream and blocks until it ends.
    /// - Returns: Why it ended (`nil` when closed on purpose).
    func run() -> EtcdTransportFailure? {
        var status = 200
        var problem: EtcdTransportFailure?
        let onFrame = self.onFrame
        let failure = transport.stream(
            request, control: control, onStatus: { status = $0 },
            onLine: { line in
                guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                    problem = EtcdTransportFailure(kind: .noAnswer, reason: "an unreadable watch frame")
                    return false
                }
                guard status == 200 else {
                    let message = object["message"] as? String ?? object["error"] as? String ?? "no message"
                    problem = EtcdTransportFailure(kind: .noAnswer, reason: "HTTP \(status): \(message)")
                    return false
                }
                return onFrame(object)
            })
        return problem ?? failure
    }

    /// Closes the stream (from any thread).
    func cancel() {
        control.cancel()
    }
}
