import Foundation
import Testing

/// The login collection's lock state is the keychain's: `keysmith lock` and `unlock` (in
/// another process) change `Locked` with `PropertiesChanged`; a locked collection never
/// returns a secret; `Unlock` prompts through KEYSMITH_ASKPASS, or completes dismissed.
@Suite("Secret Service lock state")
struct CollectionLockTests {
    /// Signals, prompts and lock/unlock from the python client.
    static let client = """
        import subprocess
        keysmith = sys.argv[2]
        LOGIN = BASE + "/collection/login"
        changes = []
        completed = []
        def on_changed(interface, changed, invalidated, path=None):
            if "Locked" in changed: changes.append((str(path), bool(changed["Locked"])))
        bus.add_signal_receiver(on_changed, signal_name="PropertiesChanged", dbus_interface="org.freedesktop.DBus.Properties", path_keyword="path")
        def on_completed(dismissed, result, path=None):
            completed.append((bool(dismissed), [str(p) for p in result]))
        bus.add_signal_receiver(on_completed, signal_name="Completed", dbus_interface="org.freedesktop.Secret.Prompt", path_keyword="path")
        context = GLib.MainContext.default()
        def wait_for(predicate, seconds=30):
            deadline = time.time() + seconds
            while not predicate() and time.time() < deadline:
                context.iteration(False)
                time.sleep(0.01)
            return predicate()
        def tool(*arguments, stdin=""):
            return subprocess.run([keysmith, *arguments], input=stdin.encode(), capture_output=True).returncode
        session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
        item = service.SearchItems({"service": "locked-svc"})[0][0]
        def secret():
            return bytes(iface(item, "org.freedesktop.Secret.Item").GetSecret(session)[2]).decode()

        """

    private func fixtureWithPassphrase(extra: [String: String] = [:]) throws -> BusFixture {
        let fixture = try BusFixture()
        let created = try fixture.keysmith(["create", "--stdin"], input: "correct horse\n")
        #expect(created.status == 0, "\(created)")
        try fixture.startServer(extra: extra)
        #expect(try fixture.secretTool(["store", "--label=Locked", "service", "locked-svc", "account", "l"], input: "behind-the-lock").status == 0)
        return fixture
    }

    @Test("keysmith lock and unlock change Locked with PropertiesChanged; locked, no secret is returned; Unlock without askpass completes dismissed")
    func lockAndUnlockFromTheTool() throws {
        let fixture = try fixtureWithPassphrase()
        let result = try fixture.python(Self.client + """
            print("locked at start", bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")))
            print("secret", secret())
            print("lock", tool("lock"))
            print("signal", wait_for(lambda: (LOGIN, True) in changes))
            print("locked now", bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")), bool(prop(item, "org.freedesktop.Secret.Item", "Locked")))
            unlocked, locked = service.SearchItems({"service": "locked-svc"})
            print("search", len(unlocked), [str(p) for p in locked] == [item])
            print(error_name(lambda: iface(item, "org.freedesktop.Secret.Item").GetSecret(session)))
            print("get secrets", len(service.GetSecrets([item], session)))
            props = {"org.freedesktop.Secret.Item.Label": "x", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"service": "new"}, signature="ss")}
            print(error_name(lambda: iface(LOGIN, "org.freedesktop.Secret.Collection").CreateItem(props, (session, b"", b"x", "text/plain"), True)))
            done, prompt = service.Unlock([LOGIN])
            print("unlock", len(done), prompt != "/")
            iface(prompt, "org.freedesktop.Secret.Prompt").Prompt("")
            print("completed", wait_for(lambda: len(completed) == 1), completed)
            print("unlock tool", tool("unlock", "--stdin", stdin="correct horse\\n"))
            print("signal", wait_for(lambda: (LOGIN, False) in changes))
            print("secret", secret())
            """, [BusFixture.product("keysmith").path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            locked at start False
            secret behind-the-lock
            lock 0
            signal True
            locked now True True
            search 0 True
            org.freedesktop.Secret.Error.IsLocked
            get secrets 0
            org.freedesktop.Secret.Error.IsLocked
            unlock 0 True
            completed True [(True, [])]
            unlock tool 0
            signal True
            secret behind-the-lock

            """, "\(result)")
        #expect(fixture.serverOutput.contains("keysmith unlock"), "\(fixture.serverOutput)")
    }

    @Test("Unlock prompts through KEYSMITH_ASKPASS: the right passphrase unlocks, a wrong one leaves it locked")
    func unlockThroughAskpass() throws {
        let fixture = try BusFixture()
        let askpass = try fixture.script("askpass", """
            #!/bin/sh
            cat "$(dirname "$0")/answer"
            """)
        let answer = fixture.directory.appendingPathComponent("answer")
        try Data("wrong\n".utf8).write(to: answer)
        let created = try fixture.keysmith(["create", "--stdin"], input: "correct horse\n")
        #expect(created.status == 0, "\(created)")
        try fixture.startServer(extra: ["KEYSMITH_ASKPASS": askpass])
        #expect(try fixture.secretTool(["store", "--label=Locked", "service", "locked-svc", "account", "l"], input: "behind-the-lock").status == 0)
        let result = try fixture.python(Self.client + """
            print("lock", tool("lock"))
            print("signal", wait_for(lambda: (LOGIN, True) in changes))
            done, prompt = service.Unlock([item])
            iface(prompt, "org.freedesktop.Secret.Prompt").Prompt("")
            print("wrong", wait_for(lambda: len(completed) == 1), completed[-1])
            print("still locked", bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")))
            open(sys.argv[3], "w").write("correct horse\\n")
            done, prompt = service.Unlock([LOGIN])
            iface(prompt, "org.freedesktop.Secret.Prompt").Prompt("")
            print("right", wait_for(lambda: len(completed) == 2), completed[-1])
            print("signal", wait_for(lambda: (LOGIN, False) in changes))
            print("secret", secret())
            """, [BusFixture.product("keysmith").path, answer.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            lock 0
            signal True
            wrong True (True, [])
            still locked True
            right True (False, ['/org/freedesktop/secrets/collection/login'])
            signal True
            secret behind-the-lock

            """, "\(result)")
        let status = try fixture.keysmith(["status"])
        #expect(status.status == 0, "\(status)")
    }
}
