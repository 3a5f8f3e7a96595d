#if canImport(Glibc)
    import Foundation
    import Glibc

    /// HTTP/1.1 over a plain socket, for `http://` etcd endpoints on Linux.
    ///
    /// FoundationNetworking on Linux stops the whole process with a fatal error when a server
    /// drops the connection right after receiving a request ("Transfer completed, but
    /// there's no response", swift-corelibs-foundation issue 5285) — exactly what an etcd
    /// member does when it crashes. A key source must survive a member's crash, so plain
    /// `http://` calls use this small client (one connection per call, `Connection: close`,
    /// `Content-Length` or chunked bodies); `https://` endpoints still go through URLSession.
    enum PlainHTTP {
        /// A finished call: status and body, or why there is none.
        enum Answer {
            case response(status: Int, body: Data)
            case failure(String)
        }

        /// An open connection, closable from another thread.
        final class Connection: @unchecked Sendable {
            private let lock = NSLock()
            private var descriptor: Int32
            private var closed = false

            init(_ descriptor: Int32) { self.descriptor = descriptor }

            var fd: Int32 { lock.locked { descriptor } }

            /// Wakes a blocked read and closes the socket.
            func cancel() {
                lock.locked {
                    guard !closed else { return }
                    closed = true
                    _ = shutdown(descriptor, Int32(SHUT_RDWR))
                }
            }

            var isCancelled: Bool { lock.locked { closed } }

            deinit { close(descriptor) }
        }

        /// One POST, read to its end.
        static func post(
            _ url: URL, headers: [String: String], body: Data, timeout: TimeInterval
        ) -> Answer {
            let deadline = Date().addingTimeInterval(timeout)
            let connection: Connection
            switch open(url, headers: headers, body: body, deadline: deadline) {
            case .success(let opened): connection = opened
            case .failure(let reason): return .failure(reason.description)
            }
            var reader = Reader(connection: connection, deadline: deadline, idle: nil)
            switch reader.head() {
            case .failure(let reason): return .failure(reason.description)
            case .success(let (status, chunked, length)):
                var body = Data()
                if chunked {
                    while true {
                        switch reader.chunk() {
                        case .failure(let reason): return .failure(reason.description)
                        case .success(let piece?): body.append(piece)
                        case .success(nil): return .response(status: status, body: body)
                        }
                    }
                }
                switch reader.rest(length) {
                case .failure(let reason): return .failure(reason.description)
                case .success(let data): return .response(status: status, body: data)
                }
            }
        }

        /// A streaming POST: each line of the (chunked) body goes to `onLine` until it returns
        /// `false`, the stream ends, or `connection` is cancelled.
        /// - Returns: Why it ended (`nil` when `onLine` closed it or it was cancelled).
        static func stream(
            _ url: URL, headers: [String: String], body: Data, connectTimeout: TimeInterval,
            idleTimeout: TimeInterval, opened: (Connection) -> Bool, onStatus: (Int) -> Void,
            onLine: (Data) -> Bool
        ) -> String? {
            let connection: Connection
            switch open(url, headers: headers, body: body, deadline: Date().addingTimeInterval(connectTimeout)) {
            case .success(let made): connection = made
            case .failure(let reason): return reason.description
            }
            guard opened(connection) else {
                connection.cancel()
                return nil
            }
            var reader = Reader(connection: connection, deadline: nil, idle: idleTimeout)
            let chunked: Bool
            switch reader.head() {
            case .failure(let reason): return connection.isCancelled ? nil : reason.description
            case .success(let (status, isChunked, _)):
                onStatus(status)
                chunked = isChunked
            }
            var pending = Data()
            while true {
                let piece: Data?
                if chunked {
                    switch reader.chunk() {
                    case .failure(let reason): return connection.isCancelled ? nil : reason.description
                    case .success(let data): piece = data
                    }
                } else {
                    switch reader.some() {
                    case .failure(let reason): return connection.isCancelled ? nil : reason.description
                    case .success(let data): piece = data
                    }
                }
                guard let piece else { return "the stream ended" }
                pending.append(piece)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = Data(pending[pending.startIndex..<newline])
                    pending.removeSubrange(pending.startIndex...newline)
                    if line.isEmpty || line == Data([0x0D]) { continue }
                    if !onLine(line) {
                        connection.cancel()
                        return nil
                    }
                }
            }
        }

        /// A reason, as an error.
        struct Reason: Error, CustomStringConvertible {
            let description: String
            init(_ description: String) { self.description = description }
        }

        /// Connects and sends the request.
        private static func open(
            _ url: URL, headers: [String: String], body: Data, deadline: Date
        ) -> Result<Connection, Reason> {
            guard let host = url.host else { return .failure(Reason("no host")) }
            let port = url.port ?? 80
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_family = AF_UNSPEC
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
                return .failure(Reason("unknown host"))
            }
            defer { freeaddrinfo(list) }
            var lastReason = "connection refused"
            var entry: UnsafeMutablePointer<addrinfo>? = first
            while let info = entry {
                entry = info.pointee.ai_next
                let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
                guard fd >= 0 else { continue }
                let connection = Connection(fd)
                let flags = fcntl(fd, F_GETFL, 0)
                _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
                var noDelay: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
                if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
                    guard errno == EINPROGRESS else {
                        lastReason = errno == ECONNREFUSED ? "connection refused" : "connect failed (errno \(errno))"
                        continue
                    }
                    switch wait(fd, events: Int16(POLLOUT), deadline: deadline, idle: nil) {
                    case .failure(let reason):
                        lastReason = reason.description
                        continue
                    case .success:
                        var error: Int32 = 0
                        var length = socklen_t(MemoryLayout<Int32>.size)
                        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                        guard error == 0 else {
                            lastReason = error == ECONNREFUSED ? "connection refused" : "connect failed (errno \(error))"
                            continue
                        }
                    }
                }
                var head = "POST \(url.path.isEmpty ? "/" : url.path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
                head += "Connection: close\r\nContent-Length: \(body.count)\r\n"
                for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
                head += "\r\n"
                var request = Data(head.utf8)
                request.append(body)
                if case .failure(let reason) = send(request, on: fd, deadline: deadline) {
                    lastReason = reason.description
                    continue
                }
                return .success(connection)
            }
            return .failure(Reason(lastReason))
        }

        private static func send(_ data: Data, on fd: Int32, deadline: Date) -> Result<Void, Reason> {
            var offset = 0
            while offset < data.count {
                let sent = data.withUnsafeBytes { buffer in
                    Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                }
                if sent > 0 {
                    offset += sent
                } else if sent < 0, errno == EAGAIN || errno == EINTR {
                    if case .failure(let reason) = wait(fd, events: Int16(POLLOUT), deadline: deadline, idle: nil) {
                        return .failure(reason)
                    }
                } else {
                    return .failure(Reason("connection lost while sending"))
                }
            }
            return .success(())
        }

        /// Waits until `fd` is ready, the deadline passes, or (streams) nothing came for `idle`.
        private static func wait(_ fd: Int32, events: Int16, deadline: Date?, idle: TimeInterval?) -> Result<Void, Reason> {
            while true {
                var milliseconds: Int32 = -1
                if let deadline {
                    let left = deadline.timeIntervalSinceNow
                    guard left > 0 else { return .failure(Reason("timed out")) }
                    milliseconds = Int32(min(left * 1000, 86_400_000).rounded(.up))
                }
                if let idle { milliseconds = Int32(min(idle * 1000, 86_400_000)) }
                var entry = pollfd(fd: fd, events: events, revents: 0)
                let ready = poll(&entry, 1, milliseconds)
                if ready > 0 { return .success(()) }
                if ready == 0 { return .failure(Reason("timed out")) }
                if errno != EINTR { return .failure(Reason("poll failed (errno \(errno))")) }
            }
        }

        /// Reads a response from a connection.
        private struct Reader {
            let connection: Connection
            let deadline: Date?
            let idle: TimeInterval?
            var buffer = Data()
            var ended = false

            init(connection: Connection, deadline: Date?, idle: TimeInterval?) {
                self.connection = connection
                self.deadline = deadline
                self.idle = idle
            }

            /// Reads more bytes into the buffer; `false` at the end of the stream.
            mutating func fill() -> Result<Bool, Reason> {
                if ended { return .success(false) }
                var scratch = [UInt8](repeating: 0, count: 16 * 1024)
                while true {
                    let fd = connection.fd
                    let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                    if count > 0 {
                        buffer.append(contentsOf: scratch[0..<count])
                        return .success(true)
                    }
                    if count == 0 {
                        ended = true
                        return .success(false)
                    }
                    guard errno == EAGAIN || errno == EINTR else {
                        return .failure(Reason(errno == ECONNRESET ? "connection lost" : "read failed (errno \(errno))"))
                    }
                    if case .failure(let reason) = PlainHTTP.wait(fd, events: Int16(POLLIN), deadline: deadline, idle: idle) {
                        return .failure(reason)
                    }
                }
            }

            /// One line ending in CRLF.
            mutating func line() -> Result<String, Reason> {
                while true {
                    if let end = buffer.firstIndex(of: 0x0A) {
                        var bytes = buffer[buffer.startIndex..<end]
                        if bytes.last == 0x0D { bytes = bytes.dropLast() }
                        let text = String(decoding: bytes, as: UTF8.self)
                        buffer.removeSubrange(buffer.startIndex...end)
                        return .success(text)
                    }
                    switch fill() {
                    case .failure(let reason): return .failure(reason)
                    case .success(false): return .failure(Reason("connection lost before an answer"))
                    case .success(true): continue
                    }
                }
            }

            /// Status line and headers: status, whether chunked, content length.
            mutating func head() -> Result<(Int, Bool, Int?), Reason> {
                guard case .success(let statusLine) = line() else {
                    return .failure(Reason("connection lost before an answer"))
                }
                let parts = statusLine.split(separator: " ")
                guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                    return .failure(Reason("not an HTTP answer"))
                }
                var chunked = false
                var length: Int?
                while true {
                    switch line() {
                    case .failure(let reason): return .failure(reason)
                    case .success(let header):
                        if header.isEmpty { return .success((status, chunked, length)) }
                        guard let colon = header.firstIndex(of: ":") else { continue }
                        let name = header[..<colon].lowercased()
                        let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                        if name == "transfer-encoding", value.lowercased().contains("chunked") { chunked = true }
                        if name == "content-length" { length = Int(value) }
                    }
                }
            }

            /// The next chunk of a chunked body; `nil` after the last one.
            mutating func chunk() -> Result<Data?, Reason> {
                guard case .success(let sizeLine) = line() else { return .failure(Reason("connection lost")) }
                guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                    return .failure(Reason("a malformed chunk"))
                }
                if size == 0 { return .success(nil) }
                while buffer.count < size + 2 {
                    switch fill() {
                    case .failure(let reason): return .failure(reason)
                    case .success(false): return .failure(Reason("connection lost in a chunk"))
                    case .success(true): continue
                    }
                }
                let data = Data(buffer.prefix(size))
                buffer.removeFirst(size + 2)
                return .success(data)
            }

            /// The rest of a body of `length` bytes (to the end of the stream when unknown).
            mutating func rest(_ length: Int?) -> Result<Data, Reason> {
                while length.map({ buffer.count < $0 }) ?? true {
                    switch fill() {
                    case .failure(let reason): return .failure(reason)
                    case .success(false):
                        if let length, buffer.count < length { return .failure(Reason("connection lost in the body")) }
                        return .success(buffer)
                    case .success(true): continue
                    }
                }
                return .success(Data(buffer.prefix(length ?? buffer.count)))
            }

            /// Whatever arrives next (bodies without chunks); `nil` at the end.
            mutating func some() -> Result<Data?, Reason> {
                if buffer.isEmpty {
                    switch fill() {
                    case .failure(let reason): return .failure(reason)
                    case .success(false): return .success(nil)
                    case .success(true): break
                    }
                }
                let data = buffer
                buffer.removeAll()
                return .success(data)
            }
        }
    }
#endif
