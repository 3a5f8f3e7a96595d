import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One streaming `POST /v3/watch` request: etcd's gateway answers with one JSON object per
/// line for as long as the connection lasts. Each line is handed to `onFrame` in order;
/// ``run()`` returns when the stream ends.
final class EtcdWatchConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let request: URLRequest
    private let onFrame: @Sendable ([String: Any]) -> Bool
    private let lock = NSCondition()
    private var buffer = Data()
    private var finished = false
    private var failure: String?
    private var status: Int?
    private var session: URLSession?
    private var task: URLSessionDataTask?
    private var cancelled = false

    /// - Parameters:
    ///   - request: The watch request.
    ///   - onFrame: Called with each frame; return `false` to close the stream.
    init(request: URLRequest, onFrame: @escaping @Sendable ([String: Any]) -> Bool) {
        self.request = request
        self.onFrame = onFrame
    }

    /// Opens the stream and blocks until it ends.
    /// - Returns: Why it ended (`nil` when closed on purpose).
    func run(idleTimeout: TimeInterval) -> String? {
        #if canImport(Glibc)
            if request.url?.scheme?.lowercased() == "http" { return runPlain(idleTimeout: idleTimeout) }
        #endif
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = idleTimeout
        configuration.timeoutIntervalForResource = 7 * 86_400
        configuration.urlCache = nil
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        let task = session.dataTask(with: request)
        lock.lock()
        if cancelled {
            lock.unlock()
            session.invalidateAndCancel()
            return nil
        }
        self.session = session
        self.task = task
        lock.unlock()
        task.resume()
        lock.lock()
        while !finished { lock.wait() }
        let reason = cancelled ? nil : (failure ?? "the stream ended")
        lock.unlock()
        session.invalidateAndCancel()
        return reason
    }

    /// Closes the stream (from any thread).
    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        #if canImport(Glibc)
            let plain = self.plain
        #endif
        lock.unlock()
        task?.cancel()
        #if canImport(Glibc)
            plain?.cancel()
        #endif
    }

    #if canImport(Glibc)
        /// The plain-socket connection of an `http://` watch.
        private var plain: PlainHTTP.Connection?

        /// An `http://` watch over ``PlainHTTP`` (see there why not URLSession).
        private func runPlain(idleTimeout: TimeInterval) -> String? {
            guard let url = request.url else { return "no URL" }
            var status = 200
            var problem: String?
            let reason = PlainHTTP.stream(
                url, headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody ?? Data(),
                connectTimeout: 5, idleTimeout: idleTimeout,
                opened: { connection in
                    lock.locked {
                        guard !cancelled else { return false }
                        plain = connection
                        return true
                    }
                },
                onStatus: { status = $0 },
                onLine: { line in
                    guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] else {
                        problem = "an unreadable watch frame"
                        return false
                    }
                    guard status == 200 else {
                        let message = object["message"] as? String ?? object["error"] as? String ?? "no message"
                        problem = "HTTP \(status): \(message)"
                        return false
                    }
                    if !onFrame(object) {
                        lock.locked { cancelled = true }
                        return false
                    }
                    return true
                })
            return lock.locked { cancelled } && problem == nil ? nil : (problem ?? reason)
        }
    #endif

    private func finish(_ reason: String?) {
        lock.lock()
        if !finished {
            finished = true
            if failure == nil { failure = reason }
        }
        lock.broadcast()
        lock.unlock()
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let code = (response as? HTTPURLResponse)?.statusCode ?? 0
        lock.locked { status = code }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        buffer.append(data)
        while let newline = buffer.firstIndex(of: 0x0A) {
            let line = buffer[buffer.startIndex..<newline]
            buffer.removeSubrange(buffer.startIndex...newline)
            guard !line.isEmpty else { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                finish("an unreadable watch frame")
                dataTask.cancel()
                return
            }
            if lock.locked({ status }) ?? 200 != 200 {
                let message = object["message"] as? String ?? object["error"] as? String ?? "no message"
                finish("HTTP \(lock.locked { status } ?? 0): \(message)")
                dataTask.cancel()
                return
            }
            if !onFrame(object) {
                finish(nil)
                lock.locked { cancelled = true }
                dataTask.cancel()
                return
            }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        finish(error.map(EtcdClient.reason) ?? "the stream ended")
    }
}
