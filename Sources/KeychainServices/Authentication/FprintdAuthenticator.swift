#if !canImport(Security)
import CSodium
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Confirms the user's presence with an enrolled fingerprint, through fprintd
/// (`net.reactivated.Fprint` on the system bus), as the desktop's login screen and
/// `pam_fprintd` do.
///
/// It verifies any finger the user running the process has enrolled on fprintd's default
/// reader (`Claim`, `VerifyStart("any")`, the `VerifyStatus` signals, `VerifyStop`,
/// `Release`). A reader that cannot tell several prints apart verifies one enrolled finger,
/// chosen by fprintd, which the prompt then names. While it waits, "Place your finger on the fingerprint reader" is written to
/// the terminal (never to standard output) when there is one.
///
/// Its ``enrolledSetIdentity()`` is a digest of the reader's name and the sorted names of the
/// enrolled fingers: adding or removing a finger changes it, which makes items created with
/// `.biometryCurrentSet` unreadable. fprintd does not say when a finger is deleted and enrolled
/// again under the same name, so that change goes unnoticed.
///
/// This authenticator only checks: it releases no key (see docs/SECURITY.md). fprintd asks
/// polkit whether the caller may verify; on a desktop the user's active session may, while a
/// process outside a session (a service, SSH without a seat) is usually refused, which this
/// authenticator reports as ``AuthenticationFailure/biometryNotAvailable``.
#if KEYSMITH_APPLE_SURFACE
@_spi(LinuxKeychain)
#endif
public struct FprintdAuthenticator: KeychainAuthenticator {
    /// "fingerprint (fprintd)".
    public var name: String { "fingerprint (fprintd)" }

    /// ``AuthenticationFactor/biometry``.
    public var factor: AuthenticationFactor { .biometry }

    /// The D-Bus address of the bus fprintd is on; `nil` means the system bus
    /// (`$DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`).
    public let busAddress: String?

    /// How long a verification waits for a finger before it gives up with
    /// ``AuthenticationFailure/systemCancel``.
    public let verifyTimeout: TimeInterval

    let terminalPath: String
    /// Called once the reader is claimed, before the verification starts (tests put the finger
    /// on the virtual reader here: it keeps the touch until the verification asks for one).
    let readerClaimed: (@Sendable () -> Void)?
    /// Called once the reader is waiting for a finger (tests unplug the virtual reader here).
    let verifyStarted: (@Sendable () -> Void)?

    static let service = "net.reactivated.Fprint"
    static let managerPath = "/net/reactivated/Fprint/Manager"
    static let managerInterface = "net.reactivated.Fprint.Manager"
    static let deviceInterface = "net.reactivated.Fprint.Device"

    /// Creates the authenticator.
    /// - Parameters:
    ///   - busAddress: The bus fprintd is on; `nil` (the default) is the system bus.
    ///   - verifyTimeout: How long to wait for a finger, in seconds (default 60).
    public init(busAddress: String? = nil, verifyTimeout: TimeInterval = 60) {
        self.init(busAddress: busAddress, verifyTimeout: verifyTimeout, terminalPath: "/dev/tty")
    }

    init(
        busAddress: String?, verifyTimeout: TimeInterval, terminalPath: String,
        readerClaimed: (@Sendable () -> Void)? = nil, verifyStarted: (@Sendable () -> Void)? = nil
    ) {
        self.busAddress = busAddress
        self.verifyTimeout = verifyTimeout
        self.terminalPath = terminalPath
        self.readerClaimed = readerClaimed
        self.verifyStarted = verifyStarted
    }

    /// ``AuthenticationFailure/biometryNotAvailable`` without a reachable fprintd or reader,
    /// ``AuthenticationFailure/biometryNotEnrolled`` when the user has no enrolled finger;
    /// `nil` otherwise.
    public func unavailability() -> AuthenticationFailure? {
        do {
            let connection = try connect()
            let device = try defaultDevice(connection)
            return try enrolledFingers(connection, device: device).isEmpty ? .biometryNotEnrolled : nil
        } catch {
            return error
        }
    }

    /// A digest (BLAKE2b-256) of the reader's name and the sorted enrolled finger names.
    /// - Throws: ``AuthenticationFailure/biometryNotAvailable`` or
    ///   ``AuthenticationFailure/biometryNotEnrolled``.
    public func enrolledSetIdentity() throws(AuthenticationFailure) -> Data? {
        let connection = try connect()
        let device = try defaultDevice(connection)
        return try identity(connection, device: device)
    }

    /// Asks for a finger on the reader and waits for fprintd's verdict.
    /// - Throws: ``AuthenticationFailure/notInteractive`` when `request.interactionAllowed` is
    ///   `false`; ``AuthenticationFailure/authenticationFailed`` when the finger does not match;
    ///   ``AuthenticationFailure/biometryNotAvailable`` (no fprintd, no reader, not allowed,
    ///   the reader disconnected); ``AuthenticationFailure/biometryNotEnrolled``;
    ///   ``AuthenticationFailure/systemCancel`` when the reader is in use by another program,
    ///   fails with an unknown error, or no finger comes before ``verifyTimeout``.
    public func authenticate(_ request: AuthenticationRequest) throws(AuthenticationFailure) -> AuthenticationEvidence {
        guard request.interactionAllowed else { throw .notInteractive }
        let connection = try connect()
        let device = try defaultDevice(connection)
        let enrolledSet = try identity(connection, device: device)
        do {
            _ = try connection.call(Self.service, device, Self.deviceInterface, "Claim", [""])
        } catch {
            throw error.name.hasSuffix(".AlreadyInUse") ? .systemCancel : .biometryNotAvailable
        }
        defer { _ = try? connection.call(Self.service, device, Self.deviceInterface, "Release") }
        readerClaimed?()
        let status: DBusSignalWatch
        let selected: DBusSignalWatch
        do {
            status = try connection.watch(sender: Self.service, path: device, interface: Self.deviceInterface, member: "VerifyStatus")
            selected = try connection.watch(
                sender: Self.service, path: device, interface: Self.deviceInterface, member: "VerifyFingerSelected")
            _ = try connection.call(Self.service, device, Self.deviceInterface, "VerifyStart", ["any"])
        } catch {
            throw error.name.hasSuffix(".NoEnrolledPrints") ? .biometryNotEnrolled : .biometryNotAvailable
        }
        defer { _ = try? connection.call(Self.service, device, Self.deviceInterface, "VerifyStop") }
        let reason = request.reason.isEmpty ? "" : request.reason + "\n"
        tell(reason + "Place your finger on the fingerprint reader.\n")
        verifyStarted?()
        var hinted = 0
        var namedFinger = false
        let finished: Bool
        do {
            finished = try connection.wait(for: status, until: Date(timeIntervalSinceNow: verifyTimeout)) { received in
                // A reader that cannot tell prints apart verifies one enrolled finger: fprintd
                // names it.
                if !namedFinger, let finger = selected.received.first?.0, finger != "any" {
                    tell("Use your \(finger.replacingOccurrences(of: "-", with: " ")).\n")
                    namedFinger = true
                }
                // A retry ("swipe too short", "remove and retry") keeps the verification running.
                for (result, _) in received.dropFirst(hinted) {
                    if let hint = Self.retryHint(result) { tell(hint + "\n") }
                }
                hinted = received.count
                return received.contains { $0.1 }
            }
        } catch {
            throw .biometryNotAvailable
        }
        guard finished, let verdict = status.received.first(where: { $0.1 })?.0 else { throw .systemCancel }
        switch verdict {
        case "verify-match":
            return AuthenticationEvidence(factor: .biometry, authenticatorName: name, enrolledSetIdentity: enrolledSet)
        case "verify-no-match":
            throw .authenticationFailed
        case "verify-disconnected":
            throw .biometryNotAvailable
        default:  // verify-unknown-error (also what an unplugged reader reports)
            throw .systemCancel
        }
    }

    /// What to tell the user for a status that keeps the verification running.
    static func retryHint(_ result: String) -> String? {
        switch result {
        case "verify-retry-scan": return "Try again."
        case "verify-swipe-too-short": return "Swipe was too short, try again."
        case "verify-finger-not-centered": return "Finger not centered, try again."
        case "verify-remove-and-retry": return "Remove your finger and try again."
        default: return nil
        }
    }

    // MARK: - fprintd

    private func connect() throws(AuthenticationFailure) -> DBusConnection {
        do {
            return try DBusConnection(address: busAddress)
        } catch {
            throw .biometryNotAvailable
        }
    }

    private func defaultDevice(_ connection: DBusConnection) throws(AuthenticationFailure) -> String {
        do {
            let reply = try connection.call(Self.service, Self.managerPath, Self.managerInterface, "GetDefaultDevice")
            guard let path = reply.readString(type: "o") else { throw AuthenticationFailure.biometryNotAvailable }
            return path
        } catch {
            throw .biometryNotAvailable  // no fprintd, or fprintd without a reader (NoSuchDevice)
        }
    }

    private func enrolledFingers(_ connection: DBusConnection, device: String) throws(AuthenticationFailure) -> [String] {
        do {
            // "" is the user running the process.
            let reply = try connection.call(Self.service, device, Self.deviceInterface, "ListEnrolledFingers", [""])
            return reply.readStrings() ?? []
        } catch {
            if error.name.hasSuffix(".NoEnrolledPrints") { return [] }
            throw .biometryNotAvailable
        }
    }

    private func identity(_ connection: DBusConnection, device: String) throws(AuthenticationFailure) -> Data {
        let fingers = try enrolledFingers(connection, device: device)
        guard !fingers.isEmpty else { throw .biometryNotEnrolled }
        let deviceName: String
        do {
            deviceName = try connection.stringProperty(Self.service, device, Self.deviceInterface, "name")
        } catch {
            throw .biometryNotAvailable
        }
        return Self.identity(deviceName: deviceName, fingers: fingers)
    }

    /// BLAKE2b-256 of a label, the reader's name and the sorted finger names, each ended by a NUL.
    static func identity(deviceName: String, fingers: [String]) -> Data {
        var input = Array("keysmith fprintd enrolled set 1".utf8) + [0]
        input += Array(deviceName.utf8) + [0]
        for finger in Set(fingers).sorted() { input += Array(finger.utf8) + [0] }
        var digest = Data(count: 32)
        digest.withUnsafeMutableBytes { out in
            _ = crypto_generichash(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, input, UInt64(input.count), nil, 0)
        }
        return digest
    }

    /// Writes a line to the terminal, when there is one (never to standard output).
    private func tell(_ text: String) {
        let terminal = open(terminalPath, O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { return }
        defer { close(terminal) }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(terminal, $0.baseAddress!, $0.count) }
    }
}
#endif
