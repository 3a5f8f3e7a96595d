import Foundation

/// One key-value pair as etcd returns it.
struct EtcdKeyValue: Sendable, Equatable {
    /// The etcd key, as text.
    let key: String
    /// The value bytes.
    let value: Data
    /// The revision of its last change.
    let modRevision: Int64
}

/// A small client for etcd's v3 JSON gateway (`POST /v3/kv/range`, `/v3/kv/txn`,
/// `/v3/auth/authenticate`): keys and values base64, 64-bit numbers as strings.
///
/// Calls are synchronous (a key source answers synchronously) and fail over: the endpoint
/// that answered last is tried first, an endpoint that does not answer, or answers that it
/// has no leader, is skipped for the next one. A TLS failure is not skipped: it is reported
/// as it is (``EtcdError/tlsFailed(endpoint:reason:)``).
final class EtcdClient: @unchecked Sendable {
    let configuration: EtcdConfiguration
    /// libcurl on Linux, URLSession on Apple platforms.
    let transport: any EtcdTransport
    private let lock = NSLock()
    /// The endpoint tried first (the last one that answered).
    private var preferred = 0
    /// The authentication token, when credentials are configured.
    private var token: String?
    /// `/v3` (etcd 3.4 and later; 3.4 also serves `/v3beta`, used when `/v3` is missing).
    private var apiRoot = "/v3"

    init(configuration: EtcdConfiguration) {
        self.configuration = configuration
        transport = EtcdTransports.make(configuration)
    }

    // MARK: Key-value calls

    /// Every key under `prefix` (one request), and the store's revision.
    /// - Parameter keysOnly: Whether to leave the values out (keys and revisions only).
    func range(prefix: String, keysOnly: Bool = false) throws -> (revision: Int64, kvs: [EtcdKeyValue]) {
        var request: [String: Any] = [
            "key": base64(prefix), "range_end": base64Data(EtcdClient.rangeEnd(of: Data(prefix.utf8))),
        ]
        if keysOnly { request["keys_only"] = true }
        let response: [String: Any]
        do {
            response = try call("/kv/range", request)
        } catch EtcdError.unreachable(let reasons) where reasons.contains(where: { $0.contains("HTTP") }) {
            // Members answer but have no leader (an election after a failover): a serializable
            // read is served by any member from its own copy.
            request["serializable"] = true
            response = try call("/kv/range", request)
        }
        return (EtcdClient.revision(response), try EtcdClient.keyValues(response["kvs"]))
    }

    /// What a create-only write found.
    enum CreateOutcome: Equatable {
        /// The key was created with the value.
        case created
        /// The key exists; its value (this one after a retry whose answer was lost).
        case exists(EtcdKeyValue)
    }

    /// Creates `key` with `value` unless it exists (a transaction comparing its create
    /// revision with 0).
    /// - Parameter operation: The write in words, for an unknown outcome.
    /// - Returns: ``CreateOutcome/created``, also when a retry after a lost answer finds its
    ///   own value; otherwise the value the key holds.
    /// - Throws: ``EtcdError/outcomeUnknown(operation:reasons:)`` when etcd may have received
    ///   the write but never answered.
    func create(_ key: String, value: Data, operation: String) throws -> CreateOutcome {
        let request: [String: Any] = [
            "compare": [["key": base64(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"]],
            "success": [["request_put": ["key": base64(key), "value": value.base64EncodedString()]]],
            "failure": [["request_range": ["key": base64(key)]]],
        ]
        let response = try call("/kv/txn", request, write: operation)
        if response["succeeded"] as? Bool == true { return .created }
        // The key exists: it is ours when an earlier attempt's answer was lost.
        let responses = response["responses"] as? [[String: Any]] ?? []
        let existing = try responses.flatMap { try EtcdClient.keyValues(($0["response_range"] as? [String: Any])?["kvs"]) }
        if existing.contains(where: { $0.value == value }) { return .created }
        guard let found = existing.first(where: { $0.key == key }) else {
            // Deleted between the compare and the read: try once more.
            return try create(key, value: value, operation: operation)
        }
        return .exists(found)
    }

    /// Deletes `key` when its last change is `modRevision` (a transaction), so a value
    /// written meanwhile is not removed by mistake.
    /// - Parameter operation: The write in words, for an unknown outcome.
    /// - Returns: Whether it was deleted.
    func delete(_ key: String, modRevision: Int64, operation: String) throws -> Bool {
        let request: [String: Any] = [
            "compare": [["key": base64(key), "target": "MOD", "result": "EQUAL", "mod_revision": String(modRevision)]],
            "success": [["request_delete_range": ["key": base64(key)]]],
        ]
        let response = try call("/kv/txn", request, write: operation)
        return response["succeeded"] as? Bool == true
    }

    // MARK: Calls with failover

    /// Posts `body` to `path` on the first endpoint that answers.
    /// - Parameter write: For a write, what it does in words: the endpoints are then tried
    ///   again while a leader is being elected (within a few request timeouts), and when
    ///   none answered but one may have received the write, the outcome is unknown.
    /// - Throws: ``EtcdError/unreachable(reasons:)``; for a write that may have been
    ///   received, ``EtcdError/outcomeUnknown(operation:reasons:)``; TLS, authentication and
    ///   server errors as they come.
    func call(_ path: String, _ body: [String: Any], write: String? = nil) throws -> [String: Any] {
        let payload = try JSONSerialization.data(withJSONObject: body)
        let count = configuration.endpoints.count
        // A write goes round the endpoints again for up to three request timeouts (a leader
        // election takes about a second); a read goes round once.
        let deadline = Date().addingTimeInterval(write != nil ? 3 * EtcdKeySource.seconds(configuration.requestTimeout) : 0)
        var reasons: [String] = []
        var mayHaveApplied = false
        var delay = 0.05
        for round in 0..<8 {
            reasons.removeAll()
            let start = lock.locked { preferred }
            for offset in 0..<count {
                let index = (start + offset) % count
                let endpoint = configuration.endpoints[index]
                switch perform(endpoint, path, payload) {
                case .answer(let object):
                    lock.locked { preferred = index }
                    return object
                case .unavailable(let reason, let received):
                    if received { mayHaveApplied = true }
                    reasons.append("\(EtcdClient.name(endpoint)): \(reason)")
                case .failed(let error):
                    throw error
                }
            }
            guard round + 1 < 8, Date().addingTimeInterval(delay) < deadline else { break }
            Thread.sleep(forTimeInterval: delay)
            delay = min(delay * 2, 0.5)
        }
        if let write, mayHaveApplied { throw EtcdError.outcomeUnknown(operation: write, reasons: reasons) }
        throw EtcdError.unreachable(reasons: reasons)
    }

    /// The outcome of one call to one endpoint.
    private enum Outcome {
        case answer([String: Any])
        /// No answer; `received` when the member may have received the request.
        case unavailable(String, received: Bool)
        case failed(EtcdError)
    }

    private func perform(_ endpoint: URL, _ path: String, _ payload: Data) -> Outcome {
        var reauthenticated = false
        while true {
            if configuration.credentials != nil, lock.locked({ token }) == nil {
                switch authenticate(endpoint) {
                case .answer: break
                case let other: return other
                }
            }
            let root = lock.locked { apiRoot }
            let (status, object, failure) = post(endpoint, root + path, payload, token: lock.locked { token })
            if let failure {
                if failure.kind == .tls {
                    return .failed(.tlsFailed(endpoint: EtcdClient.name(endpoint), reason: failure.reason))
                }
                return .unavailable(failure.reason, received: failure.kind == .noAnswer)
            }
            if status == 200, let object { return .answer(object) }
            let code = (object?["code"] as? NSNumber)?.intValue
            let message = (object?["message"] as? String) ?? (object?["error"] as? String) ?? "no message"
            if status == 404, root == "/v3" {
                lock.locked { apiRoot = "/v3beta" }
                continue
            }
            // 16 unauthenticated (expired or invalid token): once more with a new token.
            if code == 16 || message.contains("invalid auth token"), configuration.credentials != nil, !reauthenticated {
                reauthenticated = true
                lock.locked { token = nil }
                continue
            }
            if code == 16 || code == 7 || message.contains("permission denied") || message.contains("user name is empty")
            {
                return .failed(.authenticationFailed(endpoint: EtcdClient.name(endpoint), message: message))
            }
            // 14 unavailable (no leader, leader changed), 4 deadline exceeded, 503/504. Without
            // a leader nothing was proposed; a timed-out proposal may still be applied.
            if code == 14 || code == 4 || status == 503 || status == 504 || message.contains("leader") {
                return .unavailable("HTTP \(status): \(message)", received: !message.contains("no leader"))
            }
            return .failed(.server(endpoint: EtcdClient.name(endpoint), status: status, code: code, message: message))
        }
    }

    private func authenticate(_ endpoint: URL) -> Outcome {
        guard let credentials = configuration.credentials else { return .answer([:]) }
        guard
            let payload = try? JSONSerialization.data(withJSONObject: [
                "name": credentials.username, "password": credentials.password,
            ])
        else { return .failed(.invalidConfiguration(reason: "the credentials cannot be encoded")) }
        let root = lock.locked { apiRoot }
        let (status, object, failure) = post(endpoint, root + "/auth/authenticate", payload, token: nil)
        if let failure {
            if failure.kind == .tls {
                return .failed(.tlsFailed(endpoint: EtcdClient.name(endpoint), reason: failure.reason))
            }
            return .unavailable(failure.reason, received: false)
        }
        guard status == 200, let token = object?["token"] as? String else {
            let message = (object?["message"] as? String) ?? "HTTP \(status)"
            if status == 503 || message.contains("leader") { return .unavailable(message, received: false) }
            return .failed(.authenticationFailed(endpoint: EtcdClient.name(endpoint), message: message))
        }
        lock.locked { self.token = token }
        return .answer([:])
    }

    /// One POST; the answer's status and JSON, or why there was none.
    private func post(_ endpoint: URL, _ path: String, _ payload: Data, token: String?) -> (
        Int, [String: Any]?, EtcdTransportFailure?
    ) {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = token }
        let request = EtcdHTTPRequest(
            url: endpoint.appendingPathComponent(String(path.dropFirst())), headers: headers, body: payload)
        switch transport.post(request, timeout: EtcdKeySource.seconds(configuration.requestTimeout)) {
        case .failure(let failure):
            return (0, nil, failure)
        case .response(let status, let body):
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
            if object == nil, status == 200 {
                return (status, nil, EtcdTransportFailure(kind: .noAnswer, reason: "an answer that is not JSON"))
            }
            return (status, object, nil)
        }
    }

    // MARK: Encoding

    /// The watch request for `endpoint` (for ``EtcdWatchConnection``).
    func watchRequest(_ endpoint: URL, body: [String: Any]) throws -> EtcdHTTPRequest {
        if configuration.credentials != nil, lock.locked({ token }) == nil {
            if case .failed(let error) = authenticate(endpoint) { throw error }
        }
        let root = lock.locked { apiRoot }
        var headers: [String: String] = [:]
        if let token = lock.locked({ token }) { headers["Authorization"] = token }
        return EtcdHTTPRequest(
            url: endpoint.appendingPathComponent(String((root + "/watch").dropFirst())), headers: headers,
            body: try JSONSerialization.data(withJSONObject: body))
    }

    /// Forgets the token (after the watch was refused with an expired one).
    func dropToken() {
        lock.locked { token = nil }
    }

    /// The endpoint tried first.
    var preferredEndpoint: Int { lock.locked { preferred } }

    /// Records that `index` answered (the watch's endpoint).
    func prefer(_ index: Int) {
        lock.locked { preferred = index }
    }

    func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }
    func base64Data(_ data: Data) -> String { data.base64EncodedString() }

    /// The end of a prefix range: the prefix with its last byte incremented (bytes of 0xff
    /// dropped first).
    static func rangeEnd(of prefix: Data) -> Data {
        var bytes = [UInt8](prefix)
        while let last = bytes.last {
            if last < 0xff {
                bytes[bytes.count - 1] = last + 1
                return Data(bytes)
            }
            bytes.removeLast()
        }
        return Data([0])
    }

    /// An int64 field (a JSON string in proto3's mapping, a number from some gateways).
    static func int64(_ value: Any?) -> Int64 {
        if let text = value as? String { return Int64(text) ?? 0 }
        if let number = value as? NSNumber { return number.int64Value }
        return 0
    }

    /// `header.revision` of an answer.
    static func revision(_ object: [String: Any]) -> Int64 {
        int64((object["header"] as? [String: Any])?["revision"])
    }

    /// The `kvs` array of an answer.
    static func keyValues(_ value: Any?) throws -> [EtcdKeyValue] {
        guard let list = value as? [[String: Any]] else { return [] }
        return list.compactMap(keyValue)
    }

    /// One `kv` object.
    static func keyValue(_ object: [String: Any]) -> EtcdKeyValue? {
        guard let keyText = object["key"] as? String, let keyData = Data(base64Encoded: keyText),
            let key = String(data: keyData, encoding: .utf8)
        else { return nil }
        let value = (object["value"] as? String).flatMap { Data(base64Encoded: $0) } ?? Data()
        return EtcdKeyValue(key: key, value: value, modRevision: int64(object["mod_revision"]))
    }

    /// `127.0.0.1:2379`.
    static func name(_ endpoint: URL) -> String {
        let host = endpoint.host ?? endpoint.absoluteString
        return endpoint.port.map { "\(host):\($0)" } ?? host
    }
}
