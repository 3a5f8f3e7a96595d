import Foundation

/// One request to an etcd member: a POST of JSON.
struct EtcdHTTPRequest: Sendable {
    /// The full URL (endpoint and path).
    let url: URL
    /// Extra headers (`Authorization` with a token).
    let headers: [String: String]
    /// The JSON body.
    let body: Data
}

/// Why an exchange with one etcd member gave no answer.
struct EtcdTransportFailure: Error, Sendable {
    /// What is known about the request.
    enum Kind: Sendable, Equatable {
        /// The request never reached the member (no connection): nothing was applied, and
        /// another member may be tried.
        case notConnected
        /// The request may have reached the member, which gave no complete answer: a write
        /// may have been applied.
        case noAnswer
        /// TLS refused the connection (the member's certificate, or this machine's): a
        /// configuration error, reported as it is and never worked around.
        case tls
    }

    /// What is known about the request.
    let kind: Kind
    /// Why, in a few words (never a secret).
    let reason: String
}

/// What one POST gave.
enum EtcdHTTPAnswer: Sendable {
    /// The member answered: HTTP status and body.
    case response(status: Int, body: Data)
    /// No answer.
    case failure(EtcdTransportFailure)
}

/// Closes a watch stream from another thread.
final class EtcdStreamControl: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var wake: (@Sendable () -> Void)?

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { lock.locked { cancelled } }

    /// Closes the stream (wakes the transport if it waits). The wake-up runs holding the
    /// lock, so the transport cannot release what it wakes meanwhile (``setWake(_:)`` waits).
    func cancel() {
        lock.locked {
            cancelled = true
            wake?()
        }
    }

    /// Sets what wakes the transport while the stream is open (`nil` when it closes).
    /// - Returns: `false` when already cancelled.
    func setWake(_ wake: (@Sendable () -> Void)?) -> Bool {
        lock.locked {
            self.wake = wake
            return !cancelled
        }
    }
}

/// How KeysmithEtcd speaks HTTP to etcd: libcurl on Linux (``CurlTransport``), URLSession on
/// Apple platforms (``URLSessionTransport``).
protocol EtcdTransport: Sendable {
    /// One POST, read to its end within `timeout` seconds.
    func post(_ request: EtcdHTTPRequest, timeout: TimeInterval) -> EtcdHTTPAnswer

    /// A streaming POST (the watch): each line of the answer is handed to `onLine` in order
    /// (with the HTTP status first to `onStatus`) until `onLine` returns `false`, the
    /// stream ends, or `control` cancels it.
    /// - Returns: Why the stream ended; `nil` when `onLine` or `control` closed it.
    func stream(
        _ request: EtcdHTTPRequest, control: EtcdStreamControl, onStatus: @escaping (Int) -> Void,
        onLine: @escaping (Data) -> Bool
    ) -> EtcdTransportFailure?
}

/// The transport of this platform.
enum EtcdTransports {
    /// The longest line of a watch stream taken (64 MiB: etcd's frames are far smaller, even
    /// with every value of a large prefix in one transaction); a longer one ends the stream.
    static let maximumLineLength = 64 << 20

    /// Whether this platform's transport honours a CA file and client certificates
    /// (libcurl on Linux does; URLSession on Apple platforms is not set up for them yet).
    static var supportsTLSFiles: Bool {
        #if canImport(CCurl) && !KEYSMITH_APPLE_SURFACE
            return true
        #else
            return false
        #endif
    }

    /// A transport for `configuration` (its TLS settings and timeouts).
    static func make(_ configuration: EtcdConfiguration) -> any EtcdTransport {
        #if canImport(CCurl) && !KEYSMITH_APPLE_SURFACE
            return CurlTransport(
                tls: configuration.tls, connectTimeout: EtcdKeySource.seconds(configuration.requestTimeout))
        #else
            return URLSessionTransport(requestTimeout: EtcdKeySource.seconds(configuration.requestTimeout))
        #endif
    }
}
