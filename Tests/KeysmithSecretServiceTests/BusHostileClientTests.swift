import Foundation
import Testing

/// Another program of the same user on the same bus, acting against the clients it shares the
/// service with: it cannot end their sessions or answer their prompts, cannot make the service
/// hold unbounded state, and names that differ only in Unicode normalization stay two names.
@Suite("Secret Service against a hostile client")
struct BusHostileClientTests {
    /// A second connection (`other`) and helpers to call the service through it.
    static let otherClient = """
        other = dbus.bus.BusConnection(sys.argv[1])
        def other_iface(path, name): return dbus.Interface(other.get_object("org.freedesktop.secrets", path), name)
        def children(node):
            xml = iface(node, "org.freedesktop.DBus.Introspectable").Introspect()
            return [node + "/" + part.split('"')[0] for part in xml.split('<node name="')[1:]]

        """

    @Test("another client cannot close a client's session; its owner still reads through it")
    func closeAnotherClientsSession() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=W", "service", "witness", "account", "w"], input: "still-here").status == 0)
        let result = try fixture.python(Self.otherClient + """
            mine = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            print(error_name(lambda: other_iface(mine, "org.freedesktop.Secret.Session").Close()))
            item = iface(service.SearchItems({"service": "witness"})[0][0], "org.freedesktop.Secret.Item")
            print(bytes(item.GetSecret(mine)[2]).decode())
            iface(mine, "org.freedesktop.Secret.Session").Close()
            print(error_name(lambda: item.GetSecret(mine)))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            org.freedesktop.DBus.Error.AccessDenied
            still-here
            org.freedesktop.Secret.Error.NoSession

            """, "\(result)")
    }

    @Test("another client cannot dismiss or run a client's unlock prompt")
    func answerAnotherClientsPrompt() throws {
        let fixture = try BusFixture()
        #expect(try fixture.keysmith(["create", "--stdin"], input: "correct horse\n").status == 0)
        try fixture.startServer()
        #expect(try fixture.keysmith(["lock"]).status == 0)
        let result = try fixture.python(Self.otherClient + """
            LOGIN = BASE + "/collection/login"
            deadline = time.time() + 30
            while not bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")) and time.time() < deadline:
                time.sleep(0.05)
            done, prompt = service.Unlock([LOGIN])
            print("prompt", prompt != "/")
            print(error_name(lambda: other_iface(prompt, "org.freedesktop.Secret.Prompt").Dismiss()))
            print(error_name(lambda: other_iface(prompt, "org.freedesktop.Secret.Prompt").Prompt("")))
            print(error_name(lambda: iface(prompt, "org.freedesktop.Secret.Prompt").Dismiss()))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            prompt True
            org.freedesktop.DBus.Error.AccessDenied
            org.freedesktop.DBus.Error.AccessDenied
            no error

            """, "\(result)")
    }

    @Test("a client that opens sessions without end keeps a bounded number; its newest work")
    func sessionsAreBounded() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=W", "service", "witness", "account", "w"], input: "still-here").status == 0)
        let result = try fixture.python(Self.otherClient + """
            opened = [service.OpenSession("plain", dbus.String("", variant_level=1))[1] for _ in range(1100)]
            theirs = other_iface(BASE, "org.freedesktop.Secret.Service").OpenSession("plain", dbus.String("", variant_level=1))[1]
            live = children(BASE + "/session")
            print("bounded", len(live) <= 1025, opened[0] in live, opened[-1] in live, theirs in live)
            item = iface(service.SearchItems({"service": "witness"})[0][0], "org.freedesktop.Secret.Item")
            print(bytes(item.GetSecret(opened[-1])[2]).decode())
            print(error_name(lambda: item.GetSecret(opened[0])))
            print(bytes(other_iface(item.object_path, "org.freedesktop.Secret.Item").GetSecret(theirs)[2]).decode())
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            bounded True False True True
            still-here
            org.freedesktop.Secret.Error.NoSession
            still-here

            """, "\(result)")
    }

    @Test("a client that asks to unlock without end keeps a bounded number of prompts")
    func promptsAreBounded() throws {
        let fixture = try BusFixture()
        #expect(try fixture.keysmith(["create", "--stdin"], input: "correct horse\n").status == 0)
        try fixture.startServer()
        #expect(try fixture.keysmith(["lock"]).status == 0)
        let result = try fixture.python(Self.otherClient + """
            LOGIN = BASE + "/collection/login"
            deadline = time.time() + 30
            while not bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")) and time.time() < deadline:
                time.sleep(0.05)
            prompts = [service.Unlock([LOGIN])[1] for _ in range(300)]
            live = children(BASE + "/prompt")
            print("bounded", len(live) <= 64, prompts[0] in live, prompts[-1] in live)
            print(error_name(lambda: iface(prompts[-1], "org.freedesktop.Secret.Prompt").Dismiss()))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            bounded True False True
            no error

            """, "\(result)")
    }

    @Test("names that differ only in normalization are two items and two searches, in every collection")
    func namesAreBytes() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let result = try fixture.python("""
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            def create(collection, attributes, secret, replace=True):
                props = {"org.freedesktop.Secret.Item.Label": "L", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(attributes, signature="ss")}
                c = iface(BASE + "/collection/" + collection, "org.freedesktop.Secret.Collection")
                return c.CreateItem(props, (session, b"", secret.encode(), "text/plain"), replace)[0]
            def secrets(query):
                found = service.SearchItems(query)[0]
                got = service.GetSecrets(found, session)
                return sorted(bytes(got[p][2]).decode() for p in found)
            composed, decomposed = "caf\\u00e9", "cafe\\u0301"
            for collection in ["login", "session"]:
                one = create(collection, {"service": composed, "account": "a", "kind": collection}, collection + "-composed")
                two = create(collection, {"service": decomposed, "account": "a", "kind": collection}, collection + "-decomposed")
                print(collection, "paths differ", one != two)
                print(secrets({"service": composed, "kind": collection}), secrets({"service": decomposed, "kind": collection}))
                create(collection, {"service": "notes-" + collection, "account": "n", "note": composed}, "note-" + collection)
                print(secrets({"note": composed, "service": "notes-" + collection}), secrets({"note": decomposed}))
                create(collection, {"service": "names-" + collection, "account": "m", composed: "x"}, "name-" + collection)
                print(secrets({composed: "x", "service": "names-" + collection}), secrets({decomposed: "x"}))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            login paths differ True
            ['login-composed'] ['login-decomposed']
            ['note-login'] []
            ['name-login'] []
            session paths differ True
            ['session-composed'] ['session-decomposed']
            ['note-session'] []
            ['name-session'] []

            """, "\(result)")
        let composed = try fixture.keysmith(["find-generic-password", "-s", "caf\u{E9}", "-a", "a", "-w"])
        #expect(composed.output == "login-composed\n", "\(composed)")
        let decomposed = try fixture.keysmith(["find-generic-password", "-s", "cafe\u{301}", "-a", "a", "-w"])
        #expect(decomposed.output == "login-decomposed\n", "\(decomposed)")
    }

    @Test("a locked collection returns no secret, however its items are named or mixed with others")
    func lockedCollectionsReturnNothing() throws {
        let fixture = try BusFixture()
        #expect(try fixture.keysmith(["create", "--stdin"], input: "correct horse\n").status == 0)
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=Locked", "service", "locked-svc", "account", "l"], input: "behind-the-lock").status == 0)
        let result = try fixture.python(Self.otherClient + """
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            props = {"org.freedesktop.Secret.Item.Label": "S", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"service": "mem"}, signature="ss")}
            memory = iface(BASE + "/collection/session", "org.freedesktop.Secret.Collection").CreateItem(props, (session, b"", b"in-memory", "text/plain"), True)[0]
            login_item = service.SearchItems({"service": "locked-svc"})[0][0]
            element = login_item.split("/")[-1]
            by_alias = BASE + "/aliases/default/" + element
            import subprocess
            print("lock", subprocess.run([sys.argv[2], "lock"], capture_output=True).returncode)
            LOGIN = BASE + "/collection/login"
            deadline = time.time() + 30
            while not bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")) and time.time() < deadline:
                time.sleep(0.05)
            got = service.GetSecrets([login_item, by_alias, memory, BASE + "/aliases/login/" + element], session)
            print("mixed", sorted(str(p) for p in got), [bytes(v[2]).decode() for v in got.values()])
            print(error_name(lambda: iface(by_alias, "org.freedesktop.Secret.Item").GetSecret(session)))
            everything = iface(by_alias, "org.freedesktop.DBus.Properties").GetAll("")
            print("properties", sorted(str(k) for k in everything))
            service.Lock([BASE + "/aliases/session"])
            print(error_name(lambda: iface(BASE + "/aliases/session/" + memory.split("/")[-1], "org.freedesktop.Secret.Item").GetSecret(session)))
            print("session locked", len(service.GetSecrets([memory], session)))
            """, [BusFixture.product("keysmith").path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            lock 0
            mixed ['/org/freedesktop/secrets/collection/session/1'] ['in-memory']
            org.freedesktop.Secret.Error.IsLocked
            properties ['Attributes', 'Created', 'Label', 'Locked', 'Modified']
            org.freedesktop.Secret.Error.IsLocked
            session locked 0

            """, "\(result)")
    }

    @Test("GetSecrets reads an item named many times once: one answer, one read in the audit log")
    func getSecretsReadsEachPathOnce() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=W", "service", "witness", "account", "w"], input: "still-here").status == 0)
        let result = try fixture.python("""
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            item = service.SearchItems({"service": "witness"})[0][0]
            got = service.GetSecrets([item] * 500, session)
            print(len(got), bytes(got[item][2]).decode())
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "1 still-here\n", "\(result)")
        let log = try String(contentsOf: fixture.keychain.appendingPathComponent("secret-service-reads.log"), encoding: .utf8)
        #expect(log.split(separator: "\n").count == 1, "\(log.split(separator: "\n").count) reads logged")
    }

    @Test("the session collection is not deleted: its alias keeps naming it")
    func sessionCollectionStays() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let result = try fixture.python("""
            print(error_name(lambda: iface(BASE + "/collection/session", "org.freedesktop.Secret.Collection").Delete()))
            print(service.ReadAlias("session"))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "org.freedesktop.DBus.Error.NotSupported\n/org/freedesktop/secrets/collection/session\n", "\(result)")
    }

    @Test("CreateItem over an item another program stored with its own generic data is refused; that item stays as it was")
    func createItemKeepsAnotherProgramsGenericData() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let added = try fixture.keysmith(["add-generic-password", "-s", "gen-svc", "-a", "gen-acc", "-G", "their-data", "--stdin"], input: "old-secret")
        #expect(added.status == 0, "\(added)")
        let result = try fixture.python("""
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            props = {"org.freedesktop.Secret.Item.Label": "L", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"service": "gen-svc", "account": "gen-acc", "xdg:schema": "org.example"}, signature="ss")}
            login = iface(BASE + "/collection/login", "org.freedesktop.Secret.Collection")
            for replace in [False, True]:
                print(error_name(lambda: login.CreateItem(props, (session, b"", b"new-secret", "text/plain"), replace)))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "org.freedesktop.DBus.Error.Failed\norg.freedesktop.DBus.Error.Failed\n", "\(result)")
        let secret = try fixture.keysmith(["find-generic-password", "-s", "gen-svc", "-a", "gen-acc", "-w"])
        #expect(secret.output == "old-secret\n", "\(secret)")
        let attributes = try fixture.keysmith(["find-generic-password", "-s", "gen-svc", "-a", "gen-acc"])
        #expect(attributes.output.contains("\"gena\"<blob>=\"their-data\""), "\(attributes)")
    }

    @Test("a client that forges the bus's NameLost and NameOwnerChanged signals neither stops the service nor ends another's session")
    func forgedBusSignals() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=W", "service", "witness", "account", "w"], input: "still-here").status == 0)
        let result = try fixture.python(Self.otherClient + """
            import dbus.lowlevel
            mine = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            owner = other.get_name_owner("org.freedesktop.secrets")
            for destination in [owner, None]:
                for member, arguments, signature in [("NameOwnerChanged", [bus.get_unique_name(), bus.get_unique_name(), ""], "sss"),
                                                     ("NameLost", ["org.freedesktop.secrets"], "s")]:
                    forged = dbus.lowlevel.SignalMessage("/org/freedesktop/DBus", "org.freedesktop.DBus", member)
                    if destination: forged.set_destination(destination)
                    forged.append(*arguments, signature=signature)
                    other.send_message(forged)
            other.flush()
            time.sleep(1.5)
            print("owner", other.get_name_owner("org.freedesktop.secrets") == owner)
            item = iface(service.SearchItems({"service": "witness"})[0][0], "org.freedesktop.Secret.Item")
            print(bytes(item.GetSecret(mine)[2]).decode())
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "owner True\nstill-here\n", "\(result)")
        #expect(fixture.server?.isRunning == true, "\(fixture.serverOutput)")
    }

    @Test("prompts answered while the askpass program shows run it once and all complete with its outcome")
    func oneAskpassAtATime() throws {
        let fixture = try BusFixture()
        let answer = fixture.directory.appendingPathComponent("answer")
        let runs = fixture.directory.appendingPathComponent("runs")
        let askpass = try fixture.script("askpass", """
            #!/bin/sh
            echo run >> "\(runs.path)"
            while [ ! -f "\(answer.path)" ]; do sleep 0.05; done
            cat "\(answer.path)"
            """)
        #expect(try fixture.keysmith(["create", "--stdin"], input: "correct horse\n").status == 0)
        try fixture.startServer(extra: ["KEYSMITH_ASKPASS": askpass])
        #expect(try fixture.keysmith(["lock"]).status == 0)
        let result = try fixture.python(Self.otherClient + """
            LOGIN = BASE + "/collection/login"
            deadline = time.time() + 30
            while not bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")) and time.time() < deadline:
                time.sleep(0.05)
            completed = {}
            def on_completed(dismissed, result, path=None):
                completed[str(path)] = (bool(dismissed), [str(p) for p in result])
            bus.add_signal_receiver(on_completed, signal_name="Completed", dbus_interface="org.freedesktop.Secret.Prompt", path_keyword="path")
            other.add_signal_receiver(lambda *a, **k: None, signal_name="Completed", dbus_interface="org.freedesktop.Secret.Prompt")
            prompts = [service.Unlock([LOGIN])[1] for _ in range(4)] + [other_iface(BASE, "org.freedesktop.Secret.Service").Unlock([LOGIN])[1]]
            for prompt in prompts[:4]:
                iface(prompt, "org.freedesktop.Secret.Prompt").Prompt("")
            other_iface(prompts[4], "org.freedesktop.Secret.Prompt").Prompt("")
            open(sys.argv[2], "w").write("correct horse\\n")
            context = GLib.MainContext.default()
            deadline = time.time() + 30
            while len(completed) < 5 and time.time() < deadline:
                context.iteration(False)
                time.sleep(0.01)
            print(len(completed), sorted(set(str(v) for v in completed.values())))
            print("runs", open(sys.argv[3]).read().count("run"))
            """, [answer.path, runs.path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "5 [\"(False, ['/org/freedesktop/secrets/collection/login'])\"]\nruns 1\n", "\(result)")
    }

    @Test("GetSecrets leaves out an item that cannot be read now and returns the others")
    func getSecretsSkipsUnreadableItems() throws {
        let fixture = try BusFixture()
        #expect(try fixture.keysmith(["create", "--stdin"], input: "correct horse\n").status == 0)
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=W", "service", "witness", "account", "w"], input: "still-here").status == 0)
        let added = try fixture.keysmith(["add-generic-password", "-s", "guarded", "-a", "g", "--access-control", "user-presence", "--stdin"], input: "asks-first")
        #expect(added.status == 0, "\(added)")
        let result = try fixture.python("""
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            plain = service.SearchItems({"service": "witness"})[0][0]
            guarded = service.SearchItems({"service": "guarded"})[0][0]
            print(error_name(lambda: iface(guarded, "org.freedesktop.Secret.Item").GetSecret(session)))
            got = service.GetSecrets([guarded, plain], session)
            print(sorted(bytes(value[2]).decode() for value in got.values()))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "org.freedesktop.Secret.Error.IsLocked\n['still-here']\n", "\(result)")
    }

    @Test("an item whose access control asks for the user is not read through the bus: no askpass runs on the service's thread")
    func accessControlledItemsNeverPromptOnTheServiceThread() throws {
        let fixture = try BusFixture()
        let runs = fixture.directory.appendingPathComponent("runs")
        let askpass = try fixture.script("askpass", """
            #!/bin/sh
            echo run >> "\(runs.path)"
            echo "correct horse"
            """)
        #expect(try fixture.keysmith(["create", "--stdin"], input: "correct horse\n").status == 0)
        try fixture.startServer(extra: ["KEYSMITH_ASKPASS": askpass])
        let added = try fixture.keysmith(["add-generic-password", "-s", "guarded", "-a", "g", "--access-control", "user-presence", "--stdin"], input: "asks-first")
        #expect(added.status == 0, "\(added)")
        let result = try fixture.python("""
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            guarded = service.SearchItems({"service": "guarded"})[0][0]
            print(error_name(lambda: iface(guarded, "org.freedesktop.Secret.Item").GetSecret(session)))
            print(len(service.GetSecrets([guarded], session)))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == "org.freedesktop.Secret.Error.IsLocked\n0\n", "\(result)")
        #expect(!FileManager.default.fileExists(atPath: runs.path), "the service ran the askpass program for an item read")
    }
}
