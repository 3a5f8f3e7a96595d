// The fleet source against a real etcd member on loopback: how long a rotation takes to
// reach 20 watching retrievers, and what a fleet lookup costs, cached and uncached, next
// to a keychain lookup measured in the same run; then the same rows against an etcd that
// speaks TLS with its own CA and requires client certificates (as production etcd does).
import Foundation
import KeychainServices
import Keysmith
import KeysmithEtcd

/// The fleet rows, plain and over TLS (or rows saying why they could not be measured).
func fleetBenchmarkRows() -> [BenchmarkRow] {
    guard findInPath("etcd") != nil else {
        return [skippedRow("fleet (etcd)", "etcd not installed (make deps installs etcd-server)")]
    }
    var rows: [BenchmarkRow] = []
    progress("starting etcd on loopback for the fleet rows")
    if let member = FleetBenchEtcd.start(tls: nil) {
        do {
            rows += try measureFleet(endpoint: member.endpoint, tls: EtcdTLSOptions(), label: "fleet")
        } catch {
            rows.append(skippedRow("fleet (etcd)", "failed: \(error)"))
        }
        member.stop()
    } else {
        rows.append(skippedRow("fleet (etcd)", "etcd did not start"))
    }
    progress("starting etcd with TLS and client certificates for the fleet rows over TLS")
    let label = "fleet over TLS"
    guard let certificates = FleetBenchCertificates.make() else {
        return rows + [skippedRow("\(label) (etcd)", "openssl could not make the certificates")]
    }
    defer { try? FileManager.default.removeItem(at: certificates) }
    guard let member = FleetBenchEtcd.start(tls: certificates) else {
        return rows + [skippedRow("\(label) (etcd)", "etcd with TLS did not start")]
    }
    defer { member.stop() }
    let tls = EtcdTLSOptions(
        caFile: certificates.appendingPathComponent("ca.crt").path,
        clientCertificate: certificates.appendingPathComponent("client.crt").path,
        clientKey: certificates.appendingPathComponent("client.key").path)
    do {
        rows += try measureFleet(endpoint: member.endpoint, tls: tls, label: label)
    } catch {
        rows.append(skippedRow("\(label) (etcd)", "failed: \(error)"))
    }
    return rows
}

private func measureFleet(endpoint: String, tls: EtcdTLSOptions, label: String) throws -> [BenchmarkRow] {
    var rows: [BenchmarkRow] = []
    let key = FleetKey.generate()
    let prefix = "/keysmith/bench/"
    let configuration = try EtcdConfiguration(
        endpoints: [URL(string: endpoint)!], prefix: prefix, maximumStaleness: .seconds(3600), tls: tls)
    var homes: [URL] = []
    defer { homes.forEach { try? FileManager.default.removeItem(at: $0) } }
    func machine() -> (KeychainEnvironment, FleetKeychain) {
        let home = temporaryDirectory("fleet")
        homes.append(home)
        let environment = KeychainEnvironment(directory: home, accessGroups: ["keysmith.bench"])
        return (environment, KeychainEnvironment.withEnvironment(environment) { FleetKeychain() })
    }

    // 1. Rotation propagation to 20 watching retrievers (20 sources, 20 watch streams).
    progress("measuring rotation propagation to 20 watching retrievers")
    let (_, publisherKeychain) = machine()
    let publisher = EtcdKeySource(configuration: configuration, fleetKey: key, keychain: publisherKeychain)
    try publisher.publish(Data(repeating: 1, count: 32), for: "rotating_key", version: "0")
    let arrivals = FleetBenchArrivals()
    var watchers: [(EtcdKeySource, KeyRetriever)] = []
    for _ in 0..<20 {
        let (_, keychain) = machine()
        let source = EtcdKeySource(configuration: configuration, fleetKey: key, keychain: keychain)
        let retriever = KeyRetriever(
            sources: [source], environment: .release, cacheTimeToLive: nil, logging: .disabled, notificationCenter: nil)
        source.startWatching(updating: [retriever]) { change in
            if change.kind == .published { arrivals.arrived(change.version) }
        }
        watchers.append((source, retriever))
    }
    defer { watchers.forEach { $0.0.stopWatching() } }
    guard watchers.allSatisfy({ $0.0.waitUntilInStep(timeout: .seconds(15)) }) else {
        return [skippedRow("\(label) rotation to 20 watching retrievers", "the watches did not come in step")]
    }
    for (_, retriever) in watchers { _ = try retriever.retrieve("rotating_key") }
    var allTimes: [Double] = []
    var putTimes: [Double] = []
    var stale = 0
    for round in 1...15 {
        // Let the previous round's offline copies (20 keychain writes) finish: on a real fleet
        // each machine writes its own, on its own CPU.
        Thread.sleep(forTimeInterval: 0.3)
        let version = String(round)
        let start = nanoseconds()
        try publisher.publish(Data(repeating: UInt8(round), count: 32), for: "rotating_key", version: version)
        putTimes.append(Double(nanoseconds() - start))
        guard arrivals.wait(for: version, count: 20, timeout: 10) else {
            return [skippedRow("\(label) rotation to 20 watching retrievers", "a rotation did not arrive within 10 s")]
        }
        allTimes.append(Double(nanoseconds() - start))
        stale += watchers.filter { (try? $0.1.retrieve("rotating_key"))??.version != version }.count
    }
    rows.append(BenchmarkRow(
        name: "\(label): rotation reaches 20 watching retrievers (put to last cache updated)",
        value: formatDuration(median(allTimes)), baseline: "one put " + formatDuration(median(putTimes)),
        ratio: formatRatio(median(allTimes) / median(putTimes)),
        target: stale == 0 ? "under 1 s; every retriever then serves it" : "\(stale) retrievers served an old version"))

    // 2. Lookups: fleet (cached, uncached from the watch's memory, uncached from etcd) against
    // the keychain (cached, uncached), same run.
    progress("measuring fleet lookups against keychain lookups")
    let (environment, lookupKeychain) = machine()
    let fleetNoWatch = EtcdKeySource(configuration: configuration, fleetKey: key, keychain: lookupKeychain)
    try fleetNoWatch.publish(Data(repeating: 7, count: 32), for: "api_key", version: "1")
    let fleetWatched = EtcdKeySource(configuration: configuration, fleetKey: key, keychain: lookupKeychain)
    fleetWatched.startWatching()
    defer { fleetWatched.stopWatching() }
    guard fleetWatched.waitUntilInStep(timeout: .seconds(15)) else {
        return rows + [skippedRow("\(label) lookups", "the watch did not come in step")]
    }
    let keychainSource = KeychainKeySource(service: "keysmith.bench.keys")
    try KeychainEnvironment.withEnvironment(environment) {
        try keychainSource.store(Data(repeating: 9, count: 32), for: "api_key", version: "1")
    }
    func retriever(_ source: any KeySource) -> KeyRetriever {
        KeyRetriever(
            sources: [source], environment: .release, cacheTimeToLive: nil, logging: .disabled, notificationCenter: nil)
    }
    let keychainRetriever = retriever(keychainSource)
    let watchedRetriever = retriever(fleetWatched)
    let networkRetriever = retriever(fleetNoWatch)

    func perLookup(_ iterations: Int, uncached: Bool, _ target: KeyRetriever) -> Double {
        KeychainEnvironment.withEnvironment(environment) {
            var found = 0
            let start = nanoseconds()
            for _ in 0..<iterations {
                if uncached { target.clearCache() }
                if (try? target.retrieve("api_key")) != nil { found += 1 }
            }
            let elapsed = Double(nanoseconds() - start) / Double(iterations)
            return found == iterations ? elapsed : .nan
        }
    }
    var keychainCached: [Double] = [], fleetCached: [Double] = []
    var keychainUncached: [Double] = [], watchedUncached: [Double] = [], networkUncached: [Double] = []
    for round in 0..<6 {
        // Alternate which goes first (the machine is noisy).
        if round.isMultiple(of: 2) {
            keychainCached.append(perLookup(200_000, uncached: false, keychainRetriever))
            fleetCached.append(perLookup(200_000, uncached: false, watchedRetriever))
        } else {
            fleetCached.append(perLookup(200_000, uncached: false, watchedRetriever))
            keychainCached.append(perLookup(200_000, uncached: false, keychainRetriever))
        }
        keychainUncached.append(perLookup(2_000, uncached: true, keychainRetriever))
        watchedUncached.append(perLookup(2_000, uncached: true, watchedRetriever))
        networkUncached.append(perLookup(300, uncached: true, networkRetriever))
    }
    let keychainHit = median(keychainCached), keychainMiss = median(keychainUncached)
    rows.append(BenchmarkRow(
        name: "\(label) lookup, cached (KeyRetriever cache)", value: formatDuration(median(fleetCached)),
        baseline: "keychain, cached " + formatDuration(keychainHit),
        ratio: formatRatio(median(fleetCached) / keychainHit), target: "≤ 1.5x"))
    rows.append(BenchmarkRow(
        name: "\(label) lookup, uncached, watch in step (from memory, unseal)",
        value: formatDuration(median(watchedUncached)), baseline: "keychain, uncached " + formatDuration(keychainMiss),
        ratio: formatRatio(median(watchedUncached) / keychainMiss), target: "≤ 1x"))
    rows.append(BenchmarkRow(
        name: "\(label) lookup, uncached, no watch (an etcd read on loopback)",
        value: formatDuration(median(networkUncached)), baseline: "keychain, uncached " + formatDuration(keychainMiss),
        ratio: formatRatio(median(networkUncached) / keychainMiss), target: "informational"))
    return rows
}

/// Counts arrivals of each version across the watching sources.
private final class FleetBenchArrivals: @unchecked Sendable {
    private let condition = NSCondition()
    private var counts: [String: Int] = [:]

    func arrived(_ version: String) {
        condition.lock()
        counts[version, default: 0] += 1
        condition.broadcast()
        condition.unlock()
    }

    func wait(for version: String, count: Int, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while counts[version, default: 0] < count {
            if !condition.wait(until: deadline) { return counts[version, default: 0] >= count }
        }
        return true
    }
}

/// One etcd member for the benchmark, under the test suite's runner script (which stops
/// etcd when this process exits, whatever happens).
private final class FleetBenchEtcd {
    let endpoint: String
    private let runner: Process
    private let directory: URL

    private init(endpoint: String, runner: Process, directory: URL) {
        self.endpoint = endpoint
        self.runner = runner
        self.directory = directory
    }

    /// - Parameter tls: A directory with ca.crt, server.crt/key and client.crt/key: etcd then
    ///   speaks TLS and requires client certificates.
    static func start(tls: URL?) -> FleetBenchEtcd? {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/Support/etcd/run-etcd.sh").path
        guard FileManager.default.fileExists(atPath: script) else { return nil }
        let directory = temporaryDirectory("etcd")
        let client = Int.random(in: 30_000...45_000)
        let peer = client + 1
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            script, "bench", directory.path, String(client), String(peer), "bench=http://127.0.0.1:\(peer)", "new",
        ]
        if let tls {
            var environment = ProcessInfo.processInfo.environment
            environment["ETCD_TLS_DIR"] = tls.path
            process.environment = environment
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        var line = Data()
        while true {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty || byte == Data([0x0A]) { break }
            line.append(byte)
        }
        guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else {
            process.terminate()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
            return nil
        }
        return FleetBenchEtcd(
            endpoint: "\(tls == nil ? "http" : "https")://127.0.0.1:\(client)", runner: process, directory: directory)
    }

    func stop() {
        if runner.isRunning { runner.terminate() }
        runner.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl (EC
/// P-256) in a temporary directory.
private enum FleetBenchCertificates {
    static func make() -> URL? {
        guard let openssl = findInPath("openssl") else { return nil }
        let directory = temporaryDirectory("etcd-tls")
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func run(_ arguments: [String]) -> Bool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: openssl)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return false }
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
        let leaf = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        let written =
            FileManager.default.createFile(
                atPath: path("server.ext"),
                contents: Data((leaf + "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=IP:127.0.0.1\n").utf8))
            && FileManager.default.createFile(
                atPath: path("client.ext"), contents: Data((leaf + "extendedKeyUsage=clientAuth\n").utf8))
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        var made =
            written
            && run(
                ["req", "-x509"] + curve + [
                    "-keyout", path("ca.key"), "-out", path("ca.crt"), "-days", "2", "-subj", "/CN=keysmith bench ca",
                    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                ])
        for name in ["server", "client"] where made {
            made =
                run(["req"] + curve + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", "/CN=\(name)"])
                && run([
                    "x509", "-req", "-in", path("\(name).csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"),
                    "-CAcreateserial", "-days", "2", "-extfile", path("\(name).ext"), "-out", path("\(name).crt"),
                ])
        }
        if made { return directory }
        try? FileManager.default.removeItem(at: directory)
        return nil
    }
}

/// Prints the fleet rows as the main table does (for `--fleet-only`).
func printFleetTable(_ rows: [BenchmarkRow]) {
    print("| benchmark | Keysmith | baseline (same run) | ratio | target | met |\n|---|---:|---:|---:|---|---|")
    for row in rows {
        print("| \(row.name) | \(row.value) | \(row.baseline) | \(row.ratio) | \(row.target) | \(row.verdict) |")
    }
}
