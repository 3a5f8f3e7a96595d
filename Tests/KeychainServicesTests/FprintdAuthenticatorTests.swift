#if !canImport(Security)
import Foundation
import Testing

@testable import KeychainServices

/// The fingerprint authenticator against the real fprintd and libfprint's virtual reader on a
/// private bus (see ``PrivateFprintd``), not a recording.
@Suite(.serialized)
struct FprintdAuthenticatorTests {
    static let request = AuthenticationRequest(factor: .biometry, reason: "Read the refresh token")

    /// An authenticator on the private bus that gives the virtual reader `commands` once it has
    /// claimed the reader, before the verification starts: the reader keeps them until the
    /// verification asks for a touch, so each step's touches are taken by that step.
    static func authenticator(_ fprintd: PrivateFprintd, touching commands: [String] = []) -> FprintdAuthenticator {
        FprintdAuthenticator(
            busAddress: fprintd.address, verifyTimeout: 30, terminalPath: "/nonexistent/tty",
            readerClaimed: { for command in commands { fprintd.reader(command) } })
    }

    @Test(.enabled(if: PrivateFprintd.isInstalled))
    func enrolledFingersMatchOthersDoNotAndTheEnrolledSetHasAnIdentity() throws {
        let fprintd = try PrivateFprintd()
        defer { fprintd.stop() }

        // A reader without enrolled fingers.
        let plain = Self.authenticator(fprintd)
        #expect(plain.unavailability() == .biometryNotEnrolled)
        #expect(throws: AuthenticationFailure.biometryNotEnrolled) { try plain.enrolledSetIdentity() }
        #expect(throws: AuthenticationFailure.biometryNotEnrolled) { try plain.authenticate(Self.request) }

        try fprintd.enroll("right-index-finger", id: "finger-of-alice")
        #expect(plain.unavailability() == nil)
        let identity = try #require(try plain.enrolledSetIdentity())
        #expect(identity.count == 32)
        #expect(try plain.enrolledSetIdentity() == identity)

        // The enrolled finger matches; the evidence carries the enrolled set.
        let evidence = try Self.authenticator(fprintd, touching: ["SCAN finger-of-alice"]).authenticate(Self.request)
        #expect(evidence.factor == .biometry)
        #expect(evidence.authenticatorName == "fingerprint (fprintd)")
        #expect(evidence.enrolledSetIdentity == identity)
        #expect(evidence.releasedKey == nil)

        // Another finger does not.
        #expect(throws: AuthenticationFailure.authenticationFailed) {
            try Self.authenticator(fprintd, touching: ["SCAN finger-of-mallory"]).authenticate(Self.request)
        }

        // A poor scan asks again, and the next touch decides.
        let retried = try Self.authenticator(fprintd, touching: ["RETRY 0", "SCAN finger-of-alice"]).authenticate(Self.request)
        #expect(retried.enrolledSetIdentity == identity)

        // No prompt allowed: fprintd is not even asked to scan.
        var silent = Self.request
        silent.interactionAllowed = false
        #expect(throws: AuthenticationFailure.notInteractive) { try plain.authenticate(silent) }

        // Enrolling another finger changes the identity.
        try fprintd.enroll("left-thumb", id: "thumb-of-alice")
        let grown = try #require(try plain.enrolledSetIdentity())
        #expect(grown != identity)
        // The virtual reader cannot tell prints apart, so fprintd verifies one finger, the first
        // enrolled one in its order (the thumb), and the prompt on the terminal names it. fprintd
        // names the finger once VerifyStart has returned; a touch already waiting would decide
        // the verification inside VerifyStart, before that, so the reader first pauses (SLEEP),
        // as a person does between prompt and touch.
        let terminal = try PseudoTerminal()
        let prompting = FprintdAuthenticator(
            busAddress: fprintd.address, verifyTimeout: 30, terminalPath: terminal.devicePath,
            readerClaimed: {
                fprintd.reader("SLEEP 100")
                fprintd.reader("SCAN thumb-of-alice")
            })
        let evidenceAfter = try prompting.authenticate(Self.request)
        #expect(evidenceAfter.enrolledSetIdentity == grown)
        let shown = terminal.readShown(until: "Use your left thumb.")
        #expect(shown.contains("Read the refresh token"))  // the terminal shows "\n" as "\r\n"
        #expect(shown.contains("Place your finger on the fingerprint reader."))
        #expect(shown.contains("Use your left thumb."))

        // The reader in use by another program: the system canceled, and once it is free again
        // the verification works.
        var otherProgram: DBusConnection? = try fprintd.claimReader()
        #expect(throws: AuthenticationFailure.systemCancel) {
            try Self.authenticator(fprintd, touching: ["SCAN finger-of-alice"]).authenticate(Self.request)
        }
        withExtendedLifetime(otherProgram) {}
        otherProgram = nil  // it leaves without releasing the reader
        fprintd.waitUntilReaderIsFree()
        #expect(try Self.authenticator(fprintd, touching: ["SCAN thumb-of-alice"]).authenticate(Self.request).factor == .biometry)

        // The reader unplugged during a verification: fprintd reports an unknown error. (The
        // virtual reader acts on UNPLUG at once, so it is sent once the verification runs.)
        let unplugging = FprintdAuthenticator(
            busAddress: fprintd.address, verifyTimeout: 30, terminalPath: "/nonexistent/tty",
            verifyStarted: { fprintd.reader("UNPLUG") })
        #expect(throws: AuthenticationFailure.systemCancel) { try unplugging.authenticate(Self.request) }
    }

    @Test func withoutFprintdBiometryIsNotAvailable() {
        let nowhere = FprintdAuthenticator(busAddress: "unix:path=/nonexistent/keysmith-test-bus")
        #expect(nowhere.unavailability() == .biometryNotAvailable)
        #expect(throws: AuthenticationFailure.biometryNotAvailable) { try nowhere.enrolledSetIdentity() }
        #expect(throws: AuthenticationFailure.biometryNotAvailable) { try nowhere.authenticate(Self.request) }
    }

    @Test func theSystemAuthenticatorsAreTheLoginPasswordThenTheFingerprint() {
        let names = LinuxAuthenticators.systemAuthenticators.map(\.name)
        #expect(names == ["login password (PAM)", "fingerprint (fprintd)"])
        #expect(LinuxAuthenticators.systemAuthenticators.map(\.factor) == [.passcode, .biometry])
        #expect(LinuxAuthenticators.loginPassword.map(\.name) == ["login password (PAM)"])
        #expect(LinuxAuthenticators.fingerprint.map(\.name) == ["fingerprint (fprintd)"])
    }

    @Test func theIdentityDependsOnTheSetNotTheOrder() {
        let one = FprintdAuthenticator.identity(deviceName: "Reader", fingers: ["right-index-finger", "left-thumb"])
        #expect(one == FprintdAuthenticator.identity(deviceName: "Reader", fingers: ["left-thumb", "right-index-finger"]))
        #expect(one != FprintdAuthenticator.identity(deviceName: "Reader", fingers: ["left-thumb"]))
        #expect(one != FprintdAuthenticator.identity(deviceName: "Other reader", fingers: ["left-thumb", "right-index-finger"]))
        // Names are separated, so moving a character between them changes the digest.
        #expect(
            FprintdAuthenticator.identity(deviceName: "Reader", fingers: ["ab", "c"])
                != FprintdAuthenticator.identity(deviceName: "Reader", fingers: ["a", "bc"]))
    }
}
#endif
