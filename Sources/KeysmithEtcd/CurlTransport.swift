#if canImport(CCurl) && !KEYSMITH_APPLE_SURFACE
    import CCurl
    import Foundation

    /// HTTP to etcd over libcurl (Linux): every call and the watch stream, plain or TLS.
    ///
    /// TLS is verified as etcdctl verifies it: with ``EtcdTLSOptions/caFile`` only that CA is
    /// trusted (not the system store), the server's certificate must name the endpoint's host,
    /// and a client certificate and key are presented when given. A failed verification is a
    /// ``EtcdTransportFailure/Kind/tls`` failure naming its cause, never retried without TLS.
    /// Easy handles are kept in a small pool so their connections are reused.
    final class CurlTransport: EtcdTransport, @unchecked Sendable {
        private let tls: EtcdTLSOptions
        private let connectTimeout: TimeInterval
        /// When the client certificate stops being valid (checked before each call: an
        /// expired certificate is named as the cause instead of the server's TLS alert).
        private let clientCertificateValidity: CertificateValidity?
        private let lock = NSLock()
        private var idle: [UnsafeMutableRawPointer] = []

        /// libcurl's global state, set up once per process.
        private static let ready: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

        /// - Parameters:
        ///   - tls: The TLS settings.
        ///   - connectTimeout: The longest wait for a connection.
        init(tls: EtcdTLSOptions, connectTimeout: TimeInterval) {
            precondition(CurlTransport.ready, "libcurl failed to initialize")
            self.tls = tls
            self.connectTimeout = connectTimeout
            // EtcdConfiguration checked that the file reads; libcurl reports it otherwise.
            clientCertificateValidity = tls.clientCertificate.flatMap { try? CertificateValidity.read(pemFile: $0) }
        }

        deinit {
            for handle in idle { curl_easy_cleanup(handle) }
        }

        // MARK: Calls

        func post(_ request: EtcdHTTPRequest, timeout: TimeInterval) -> EtcdHTTPAnswer {
            if let failure = certificateFailure() { return .failure(failure) }
            let (code, answer) = attempt(request, timeout: timeout, atMostTLS12: false)
            // With TLS 1.3 the server checks the client certificate after the handshake, and its
            // refusal often races the connection's end ("connection lost", no alert). Once more
            // with TLS 1.2, where the refusal comes as an alert within the handshake: its answer,
            // or its TLS failure, is the one that names the cause.
            if case .failure(let failure) = answer, failure.kind != .tls, request.url.scheme?.lowercased() == "https",
                code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR
            {
                let (_, second) = attempt(request, timeout: timeout, atMostTLS12: true)
                switch second {
                case .response: return second
                case .failure(let again) where again.kind == .tls: return second
                case .failure: return answer
                }
            }
            return answer
        }

        /// One call.
        private func attempt(_ request: EtcdHTTPRequest, timeout: TimeInterval, atMostTLS12: Bool) -> (
            CURLcode, EtcdHTTPAnswer
        ) {
            let handle = lock.locked { idle.popLast() } ?? curl_easy_init()
            guard let handle else {
                return (
                    CURLE_FAILED_INIT,
                    .failure(EtcdTransportFailure(kind: .notConnected, reason: "libcurl could not start a call"))
                )
            }
            let transfer = Transfer(onLine: nil)
            var headers: UnsafeMutablePointer<curl_slist>?
            defer { curl_slist_free_all(headers) }
            var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
            let code = errorBuffer.withUnsafeMutableBufferPointer { buffer -> CURLcode in
                let unmanaged = Unmanaged.passRetained(transfer)
                defer { unmanaged.release() }
                headers = configure(
                    handle, request, context: unmanaged.toOpaque(), errorBuffer: buffer.baseAddress!,
                    timeout: timeout)
                if atMostTLS12 {
                    _ = keysmith_curl_set_long(
                        handle, CURLOPT_SSLVERSION, CURL_SSLVERSION_DEFAULT | CURL_SSLVERSION_MAX_TLSv1_2)
                }
                let code = curl_easy_perform(handle)
                // The buffer is valid only in this closure: libcurl must not write to it later
                // (closing the connection in curl_easy_cleanup).
                _ = keysmith_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, nil)
                return code
            }
            let message = CurlTransport.text(errorBuffer)
            let answer: EtcdHTTPAnswer
            if code == CURLE_OK {
                var status = 0
                _ = keysmith_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
                answer = .response(status: status, body: transfer.body)
            } else {
                answer = .failure(failure(code, message: message, handle: handle, host: request.url.host ?? ""))
            }
            // A handle is reused (with its connection) only after a call that went well.
            if code == CURLE_OK {
                curl_easy_reset(handle)
                lock.locked { idle.count < 4 ? idle.append(handle) : curl_easy_cleanup(handle) }
            } else {
                curl_easy_cleanup(handle)
            }
            return (code, answer)
        }

        func stream(
            _ request: EtcdHTTPRequest, control: EtcdStreamControl, onStatus: @escaping (Int) -> Void,
            onLine: @escaping (Data) -> Bool
        ) -> EtcdTransportFailure? {
            if let failure = certificateFailure() { return failure }
            guard let handle = curl_easy_init() else {
                return EtcdTransportFailure(kind: .notConnected, reason: "libcurl could not start the watch")
            }
            defer { curl_easy_cleanup(handle) }
            guard let multi = curl_multi_init() else {
                return EtcdTransportFailure(kind: .notConnected, reason: "libcurl could not start the watch")
            }
            defer { curl_multi_cleanup(multi) }
            let transfer = Transfer(onLine: onLine)
            transfer.onStatus = onStatus
            transfer.handle = handle
            var headers: UnsafeMutablePointer<curl_slist>?
            defer { curl_slist_free_all(headers) }
            var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
            let unmanaged = Unmanaged.passRetained(transfer)
            defer { unmanaged.release() }
            let result: CURLcode? = errorBuffer.withUnsafeMutableBufferPointer { buffer in
                headers = configure(
                    handle, request, context: unmanaged.toOpaque(), errorBuffer: buffer.baseAddress!, timeout: nil)
                curl_multi_add_handle(multi, handle)
                defer { curl_multi_remove_handle(multi, handle) }
                let wakeable = UnsafeSendable(multi)
                guard control.setWake({ curl_multi_wakeup(wakeable.value) }) else { return nil }
                defer { _ = control.setWake(nil) }
                var running: Int32 = 1
                while running > 0 {
                    if control.isCancelled { return nil }
                    curl_multi_perform(multi, &running)
                    var left: Int32 = 0
                    while let message = curl_multi_info_read(multi, &left) {
                        if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
                    }
                    if running == 0 { break }
                    curl_multi_poll(multi, nil, 0, 1000, nil)
                }
                return CURLE_OK
            }
            // The buffer was valid only in the closure (its text was read there, or is read below
            // from the array, which outlives the handle's use of it).
            _ = keysmith_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, nil)
            if let oversized = transfer.oversizedLine { return oversized }
            if control.isCancelled || transfer.closedOnPurpose { return nil }
            guard let result else { return nil }
            if result == CURLE_OK {
                return EtcdTransportFailure(kind: .noAnswer, reason: "the stream ended")
            }
            return failure(result, message: CurlTransport.text(errorBuffer), handle: handle, host: request.url.host ?? "")
        }

        // MARK: Setting up a call

        /// Sets every option of one call; returns the header list to free after it.
        private func configure(
            _ handle: UnsafeMutableRawPointer, _ request: EtcdHTTPRequest, context: UnsafeMutableRawPointer,
            errorBuffer: UnsafeMutablePointer<CChar>, timeout: TimeInterval?
        ) -> UnsafeMutablePointer<curl_slist>? {
            _ = keysmith_curl_set_string(handle, CURLOPT_URL, request.url.absoluteString)
            _ = keysmith_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
            _ = keysmith_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = keysmith_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            _ = keysmith_curl_set_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
            _ = keysmith_curl_set_long(handle, CURLOPT_POST, 1)
            _ = keysmith_curl_set_long(handle, CURLOPT_POSTFIELDSIZE, request.body.count)
            if request.body.isEmpty {
                _ = keysmith_curl_set_string(handle, CURLOPT_COPYPOSTFIELDS, "")
            } else {
                request.body.withUnsafeBytes { bytes in
                    _ = keysmith_curl_set_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                }
            }
            var headers: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Content-Type: application/json")
            // No "Expect: 100-continue" round trip for bodies over 1 KiB.
            headers = curl_slist_append(headers, "Expect:")
            for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
                headers = curl_slist_append(headers, "\(name): \(value)")
            }
            _ = keysmith_curl_set_slist(handle, CURLOPT_HTTPHEADER, headers)
            _ = keysmith_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer)
            _ = keysmith_curl_set_write_function(handle, curlWrite)
            _ = keysmith_curl_set_pointer(handle, CURLOPT_WRITEDATA, context)
            _ = keysmith_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(connectTimeout * 1000)))
            if let timeout { _ = keysmith_curl_set_long(handle, CURLOPT_TIMEOUT_MS, max(1, Int(timeout * 1000))) }
            _ = keysmith_curl_set_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
            _ = keysmith_curl_set_long(handle, CURLOPT_TCP_KEEPIDLE, 10)
            _ = keysmith_curl_set_long(handle, CURLOPT_TCP_KEEPINTVL, 5)
            // TLS, verified: the server's certificate against the CA (only the CA file when one
            // is given), its name against the endpoint's host.
            _ = keysmith_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
            _ = keysmith_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
            if let caFile = tls.caFile {
                _ = keysmith_curl_set_string(handle, CURLOPT_CAINFO, caFile)
                _ = keysmith_curl_set_string(handle, CURLOPT_CAPATH, nil)
            }
            if let certificate = tls.clientCertificate {
                _ = keysmith_curl_set_string(handle, CURLOPT_SSLCERT, certificate)
                _ = keysmith_curl_set_string(handle, CURLOPT_SSLCERTTYPE, "PEM")
            }
            if let key = tls.clientKey {
                _ = keysmith_curl_set_string(handle, CURLOPT_SSLKEY, key)
                _ = keysmith_curl_set_string(handle, CURLOPT_SSLKEYTYPE, "PEM")
            }
            return headers
        }

        // MARK: Failures

        /// The text of libcurl's error buffer.
        private static func text(_ buffer: [CChar]) -> String {
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// An expired (or not yet valid) client certificate, named before a call is made.
        private func certificateFailure() -> EtcdTransportFailure? {
            guard let validity = clientCertificateValidity, let path = tls.clientCertificate else { return nil }
            let now = Date()
            if now > validity.notAfter {
                return EtcdTransportFailure(
                    kind: .tls,
                    reason: "the client certificate \(path) expired on \(EtcdError.timestamp(validity.notAfter))")
            }
            if now < validity.notBefore {
                return EtcdTransportFailure(
                    kind: .tls,
                    reason: "the client certificate \(path) is not valid before \(EtcdError.timestamp(validity.notBefore))")
            }
            return nil
        }

        /// What a failed call means.
        private func failure(_ code: CURLcode, message: String, handle: UnsafeMutableRawPointer, host: String)
            -> EtcdTransportFailure
        {
            let detail = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
            let lower = detail.lowercased()
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST:
                return EtcdTransportFailure(kind: .notConnected, reason: "unknown host")
            case CURLE_COULDNT_CONNECT:
                return EtcdTransportFailure(kind: .notConnected, reason: "connection refused")
            case CURLE_OPERATION_TIMEDOUT:
                // Timed out before the request was on its way: it cannot have been applied.
                var started: curl_off_t = 0
                _ = keysmith_curl_get_offset(handle, CURLINFO_PRETRANSFER_TIME_T, &started)
                return EtcdTransportFailure(kind: started > 0 ? .noAnswer : .notConnected, reason: "timed out")
            case CURLE_PEER_FAILED_VERIFICATION:
                return EtcdTransportFailure(kind: .tls, reason: serverCertificateReason(lower, detail: detail, host: host))
            case CURLE_SSL_CACERT_BADFILE:
                return EtcdTransportFailure(
                    kind: .tls, reason: "the CA file \(tls.caFile ?? "(system)") cannot be used: \(detail)")
            case CURLE_SSL_CERTPROBLEM:
                return EtcdTransportFailure(
                    kind: .tls,
                    reason: "the client certificate \(tls.clientCertificate ?? "") or its key \(tls.clientKey ?? "") "
                        + "cannot be used: \(detail)")
            default:
                break
            }
            if lower.contains("alert") && lower.contains("certificate") || lower.contains("unknown ca") {
                // The server refused this machine's certificate (or its absence) during the handshake.
                if tls.clientCertificate == nil {
                    return EtcdTransportFailure(
                        kind: .tls,
                        reason: "the server requires a client certificate and none is configured (TLS alert: \(detail))")
                }
                return EtcdTransportFailure(
                    kind: .tls,
                    reason: "the server refused the client certificate \(tls.clientCertificate ?? "") (TLS alert: \(detail))")
            }
            if code == CURLE_SSL_CONNECT_ERROR {
                if lower.contains("reset") || lower.contains("syscall") || lower.contains("unexpected eof") {
                    return EtcdTransportFailure(kind: .notConnected, reason: "connection lost during the TLS handshake")
                }
                if lower.contains("wrong version number") || lower.contains("packet length too long") {
                    return EtcdTransportFailure(
                        kind: .tls, reason: "the server does not speak TLS (is it an http:// endpoint?): \(detail)")
                }
                return EtcdTransportFailure(kind: .tls, reason: "the TLS handshake failed: \(detail)")
            }
            if code == CURLE_GOT_NOTHING || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR
                || code == CURLE_PARTIAL_FILE
            {
                return EtcdTransportFailure(kind: .noAnswer, reason: "connection lost (\(detail))")
            }
            return EtcdTransportFailure(kind: .noAnswer, reason: detail)
        }

        /// Why the server's certificate was refused.
        private func serverCertificateReason(_ lower: String, detail: String, host: String) -> String {
            if lower.contains("subject name") || lower.contains("host name") || lower.contains("does not match") {
                return "the server's certificate is not issued for \(host) (server name check failed: \(detail))"
            }
            if lower.contains("expired") {
                return "the server's certificate has expired (\(detail))"
            }
            if lower.contains("issuer") || lower.contains("self-signed") || lower.contains("self signed")
                || lower.contains("unknown ca") || lower.contains("verify")
            {
                let authority = tls.caFile.map { "the CA file \($0)" } ?? "the system's trusted CAs"
                return "the server's certificate is not signed by \(authority) (\(detail))"
            }
            return "the server's certificate was refused (\(detail))"
        }

        // MARK: Transfers

        /// What the write callback fills (one call or one stream).
        final class Transfer {
            var body = Data()
            var buffer = Data()
            let onLine: ((Data) -> Bool)?
            var onStatus: ((Int) -> Void)?
            var handle: UnsafeMutableRawPointer?
            var status: Int?
            var closedOnPurpose = false
            /// The longest line taken (``EtcdTransports/maximumLineLength`` outside tests).
            let maximumLineLength: Int
            /// Set when a line grew past ``maximumLineLength``: the stream was closed.
            var oversizedLine: EtcdTransportFailure?

            init(onLine: ((Data) -> Bool)?, maximumLineLength: Int = EtcdTransports.maximumLineLength) {
                self.onLine = onLine
                self.maximumLineLength = maximumLineLength
            }

            /// Takes `bytes`; `false` aborts the transfer.
            func take(_ bytes: UnsafeRawBufferPointer) -> Bool {
                guard let onLine else {
                    body.append(contentsOf: bytes)
                    return true
                }
                if status == nil, let handle {
                    var code = 0
                    _ = keysmith_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &code)
                    status = code
                    onStatus?(code)
                }
                buffer.append(contentsOf: bytes)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = Data(buffer[buffer.startIndex..<newline])
                    buffer.removeSubrange(buffer.startIndex...newline)
                    guard !line.isEmpty else { continue }
                    if !onLine(line) {
                        closedOnPurpose = true
                        return false
                    }
                }
                // A frame that never ends (a server sending garbage, or not etcd) would grow
                // without bound: the stream is dropped and the watch reconnects.
                if buffer.count > maximumLineLength {
                    buffer = Data()
                    oversizedLine = EtcdTransportFailure(
                        kind: .noAnswer,
                        reason: "a watch frame longer than \(maximumLineLength) bytes (is the endpoint etcd?)")
                    return false
                }
                return true
            }
        }
    }

    /// libcurl's write callback: hands the bytes to the call's ``CurlTransport/Transfer``.
    private func curlWrite(
        _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
    ) -> Int {
        guard let context else { return 0 }
        let transfer = Unmanaged<CurlTransport.Transfer>.fromOpaque(context).takeUnretainedValue()
        let length = size * count
        guard length > 0, let data else { return length }
        return transfer.take(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
    }

    /// A value handed to a `@Sendable` closure that only libcurl's thread-safe calls use.
    private struct UnsafeSendable<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }
#endif
