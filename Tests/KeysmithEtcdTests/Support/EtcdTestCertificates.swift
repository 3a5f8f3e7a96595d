import Foundation

/// Certificates for an etcd that speaks TLS on loopback, made with `openssl` in a temporary
/// directory: a CA, a server certificate for 127.0.0.1 signed by it, a client certificate it
/// signed, an expired client certificate, and another CA that signed nothing etcd knows.
struct EtcdTestCertificates: Sendable {
    let directory: URL

    var caFile: String { path("ca.crt") }
    var clientCertificate: String { path("client.crt") }
    var clientKey: String { path("client.key") }
    /// Signed by the CA, but its validity ended yesterday.
    var expiredClientCertificate: String { path("expired-client.crt") }
    /// A CA that did not sign etcd's certificate.
    var otherCAFile: String { path("other-ca.crt") }
    /// A client certificate signed by the other CA (etcd does not trust it).
    var strangerClientCertificate: String { path("stranger-client.crt") }
    var strangerClientKey: String { path("stranger-client.key") }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Makes every file (EC P-256 keys: quick).
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keysmith-etcd-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let leaf = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        try write("server.ext", leaf + "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1\n")
        try write("client.ext", leaf + "extendedKeyUsage=clientAuth\n")
        for authority in ["ca", "other-ca"] {
            try openssl([
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                path("\(authority).key"), "-out", path("\(authority).crt"), "-days", "2", "-subj",
                "/CN=keysmith test \(authority)", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ])
        }
        try leafCertificate("server", authority: "ca", extensions: "server.ext", days: "2")
        try leafCertificate("client", authority: "ca", extensions: "client.ext", days: "2")
        try leafCertificate("expired-client", authority: "ca", extensions: "client.ext", days: "-1")
        try leafCertificate("stranger-client", authority: "other-ca", extensions: "client.ext", days: "2")
    }

    /// Removes the directory.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func leafCertificate(_ name: String, authority: String, extensions: String, days: String) throws {
        try openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path("\(name).key"),
            "-out", path("\(name).csr"), "-subj", "/CN=keysmith test \(name)",
        ])
        try openssl([
            "x509", "-req", "-in", path("\(name).csr"), "-CA", path("\(authority).crt"), "-CAkey", path("\(authority).key"),
            "-CAcreateserial", "-days", days, "-extfile", path(extensions), "-out", path("\(name).crt"),
        ])
    }

    private func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: EtcdTestCluster.which("openssl") ?? "/usr/bin/openssl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw EtcdTestCluster.ClusterError("openssl \(arguments.first ?? "") failed: \(String(decoding: data, as: UTF8.self))")
        }
    }
}
