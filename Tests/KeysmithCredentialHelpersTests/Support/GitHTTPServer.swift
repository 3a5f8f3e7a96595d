import Foundation

/// A git server on loopback that demands HTTP Basic authentication: Python's `http.server`
/// in front of `git http-backend`. Started by a test and always stopped by it (`stop()`,
/// and the server also exits when the test process's end of its standard input closes).
final class GitHTTPServer {
    let process = Process()
    let port: Int
    private let input = Pipe()

    /// Starts the server for the bare repositories under `root`; it accepts `user` with the
    /// password currently in the file `passwordFile` (read on every request, so a test can
    /// change it), and appends one line per refused request to `log`.
    init(root: String, user: String, passwordFile: String, log: String, home: HelperHome) throws {
        let script = home.path("git-http-server.py")
        try Self.script.write(toFile: script, atomically: true, encoding: .utf8)
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, root, user, passwordFile, log]
        process.environment = home.environment()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line the server prints is its port (a blocking read: no sleep).
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            process.waitUntilExit()
            throw ServerDidNotStart()
        }
        self.port = port
    }

    /// Stops the server and waits for it.
    func stop() {
        if process.isRunning { process.terminate() }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    deinit { stop() }

    struct ServerDidNotStart: Error {}

    static let script = #"""
        import base64, http.server, os, subprocess, sys, threading

        root, user, password_file, log = sys.argv[1:5]

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.serve()

            def do_POST(self):
                self.serve()

            def body(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    data = b""
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        if size == 0:
                            self.rfile.readline()
                            return data
                        data += self.rfile.read(size)
                        self.rfile.readline()
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def serve(self):
                with open(password_file) as f:
                    password = f.read()
                expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
                body = self.body()
                if self.headers.get("Authorization") != expected:
                    with open(log, "a") as f:
                        f.write("401 " + ("with credentials" if self.headers.get("Authorization") else "anonymous") + "\n")
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="keysmith-test"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1",
                           REQUEST_METHOD=self.command, PATH_INFO=path, QUERY_STRING=query,
                           CONTENT_TYPE=self.headers.get("Content-Type", ""), CONTENT_LENGTH=str(len(body)),
                           REMOTE_USER=user, REMOTE_ADDR="127.0.0.1", GATEWAY_INTERFACE="CGI/1.1",
                           SERVER_PROTOCOL="HTTP/1.0")
                if self.headers.get("Content-Encoding"):
                    env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                if self.headers.get("Git-Protocol"):
                    env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
                out = subprocess.run(["git", "http-backend"], input=body, env=env, stdout=subprocess.PIPE).stdout
                separator = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
                head, _, payload = out.partition(separator)
                status, headers = 200, []
                for line in head.decode("latin-1").splitlines():
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)

        def watch_parent():
            sys.stdin.read()  # returns when the test's end of the pipe closes
            os._exit(0)

        threading.Thread(target=watch_parent, daemon=True).start()
        server.serve_forever()
        """#
}
