#if !canImport(CCurl) || KEYSMITH_APPLE_SURFACE
    import Foundation

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// HTTP to etcd over URLSession, on Apple platforms: `https://` is verified against the
    /// system's trust store (a CA file or client certificate is refused by
    /// ``EtcdConfiguration``, never ignored). On Linux the fleet uses ``CurlTransport``.
    final class URLSessionTransport: EtcdTransport, @unchecked Sendable {
        private let session: URLSession

        init(requestTimeout: TimeInterval) {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = requestTimeout
            configuration.timeoutIntervalForResource = requestTimeout
            configuration.httpMaximumConnectionsPerHost = 4
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            session = URLSession(configuration: configuration)
        }

        deinit {
            session.invalidateAndCancel()
        }

        func post(_ request: EtcdHTTPRequest, timeout: TimeInterval) -> EtcdHTTPAnswer {
            var urlRequest = URLSessionTransport.urlRequest(request)
            urlRequest.timeoutInterval = timeout
            let box = ResponseBox()
            let done = DispatchSemaphore(value: 0)
            let task = session.dataTask(with: urlRequest) { data, response, error in
                box.set(data, (response as? HTTPURLResponse)?.statusCode, error)
                done.signal()
            }
            task.resume()
            done.wait()
            let (data, status, error) = box.get()
            if let error { return .failure(URLSessionTransport.failure(error)) }
            guard let status else { return .failure(EtcdTransportFailure(kind: .noAnswer, reason: "no HTTP answer")) }
            return .response(status: status, body: data ?? Data())
        }

        func stream(
            _ request: EtcdHTTPRequest, control: EtcdStreamControl, onStatus: @escaping (Int) -> Void,
            onLine: @escaping (Data) -> Bool
        ) -> EtcdTransportFailure? {
            let delegate = StreamDelegate(onStatus: onStatus, onLine: onLine)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = 7 * 86_400
            configuration.timeoutIntervalForResource = 7 * 86_400
            configuration.urlCache = nil
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
            defer { session.invalidateAndCancel() }
            let task = session.dataTask(with: URLSessionTransport.urlRequest(request))
            guard control.setWake({ task.cancel() }) else { return nil }
            defer { _ = control.setWake(nil) }
            task.resume()
            let failure = delegate.waitUntilFinished()
            return control.isCancelled ? nil : failure
        }

        static func urlRequest(_ request: EtcdHTTPRequest) -> URLRequest {
            var urlRequest = URLRequest(url: request.url)
            urlRequest.httpMethod = "POST"
            urlRequest.httpBody = request.body
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            return urlRequest
        }

        /// A transport error in a few words, and what it says about the request.
        static func failure(_ error: any Error) -> EtcdTransportFailure {
            guard let error = error as? URLError else { return EtcdTransportFailure(kind: .noAnswer, reason: "\(error)") }
            switch error.code {
            case .cannotConnectToHost: return EtcdTransportFailure(kind: .notConnected, reason: "connection refused")
            case .cannotFindHost: return EtcdTransportFailure(kind: .notConnected, reason: "unknown host")
            case .timedOut: return EtcdTransportFailure(kind: .noAnswer, reason: "timed out")
            case .networkConnectionLost: return EtcdTransportFailure(kind: .noAnswer, reason: "connection lost")
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
                .clientCertificateRequired:
                return EtcdTransportFailure(kind: .tls, reason: "TLS failed (URLError \(error.code.rawValue))")
            default: return EtcdTransportFailure(kind: .noAnswer, reason: "network error \(error.code.rawValue)")
            }
        }

        /// A completion handler's results, handed across threads.
        private final class ResponseBox: @unchecked Sendable {
            private let lock = NSLock()
            private var data: Data?
            private var status: Int?
            private var error: (any Error)?

            func set(_ data: Data?, _ status: Int?, _ error: (any Error)?) {
                lock.locked {
                    self.data = data
                    self.status = status
                    self.error = error
                }
            }

            func get() -> (Data?, Int?, (any Error)?) {
                lock.locked { (data, status, error) }
            }
        }

        /// The watch stream's delegate: lines to `onLine`, and how it ended.
        private final class StreamDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
            private let onStatus: (Int) -> Void
            private let onLine: (Data) -> Bool
            private let condition = NSCondition()
            private var buffer = Data()
            private var finished = false
            private var failure: EtcdTransportFailure?

            init(onStatus: @escaping (Int) -> Void, onLine: @escaping (Data) -> Bool) {
                self.onStatus = onStatus
                self.onLine = onLine
            }

            func waitUntilFinished() -> EtcdTransportFailure? {
                condition.lock()
                defer { condition.unlock() }
                while !finished { condition.wait() }
                return failure
            }

            private func finish(_ failure: EtcdTransportFailure?) {
                condition.lock()
                if !finished {
                    finished = true
                    self.failure = failure
                }
                condition.broadcast()
                condition.unlock()
            }

            func urlSession(
                _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
            ) {
                onStatus((response as? HTTPURLResponse)?.statusCode ?? 0)
                completionHandler(.allow)
            }

            func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                buffer.append(data)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = Data(buffer[buffer.startIndex..<newline])
                    buffer.removeSubrange(buffer.startIndex...newline)
                    guard !line.isEmpty else { continue }
                    if !onLine(line) {
                        finish(nil)
                        dataTask.cancel()
                        return
                    }
                }
                if buffer.count > EtcdTransports.maximumLineLength {
                    buffer = Data()
                    finish(
                        EtcdTransportFailure(
                            kind: .noAnswer,
                            reason: "a watch frame longer than \(EtcdTransports.maximumLineLength) bytes (is the "
                                + "endpoint etcd?)"))
                    dataTask.cancel()
                }
            }

            func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                finish(error.map(URLSessionTransport.failure) ?? EtcdTransportFailure(kind: .noAnswer, reason: "the stream ended"))
            }
        }
    }
#endif
