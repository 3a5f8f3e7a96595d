import Foundation
import KeychainServices
import Testing

/// The attribute index: keyed hashes of every attribute, kept in an item of the service's own
/// group accessible after the first unlock, so a search while the keychain is locked finds
/// items (in `SearchItems`' `locked` list) even in a service started while locked.
@Suite("Secret Service attribute index")
struct CollectionAttributeIndexTests {
    /// Lock-state helpers for the python clients.
    static let client = """
        import subprocess
        keysmith = sys.argv[2]
        LOGIN = BASE + "/collection/login"
        changes = []
        def on_changed(interface, changed, invalidated, path=None):
            if "Locked" in changed: changes.append((str(path), bool(changed["Locked"])))
        bus.add_signal_receiver(on_changed, signal_name="PropertiesChanged", dbus_interface="org.freedesktop.DBus.Properties", path_keyword="path")
        context = GLib.MainContext.default()
        def wait_for(predicate, seconds=30):
            deadline = time.time() + seconds
            while not predicate() and time.time() < deadline:
                context.iteration(False)
                time.sleep(0.01)
            return predicate()
        def tool(*arguments, stdin=""):
            return subprocess.run([keysmith, *arguments], input=stdin.encode(), capture_output=True).returncode
        def search(**attributes):
            unlocked, locked = service.SearchItems(dbus.Dictionary({k.replace("_", ":"): v for k, v in attributes.items()}, signature="ss"))
            return [str(p) for p in unlocked], [str(p) for p in locked]

        """

    /// A keychain with a passphrase (so it can be locked) and the service on it.
    private func lockableFixture() throws -> BusFixture {
        let fixture = try BusFixture()
        let created = try fixture.keysmith(["create", "--stdin"], input: "correct horse\n")
        #expect(created.status == 0, "\(created)")
        try fixture.startServer()
        return fixture
    }

    /// Stops the service, locks the keychain with the tool and starts a new service: it never
    /// saw the items unlocked.
    private func restartLocked(_ fixture: BusFixture) throws {
        #expect(try fixture.stopServer() == 0)
        let locked = try fixture.keysmith(["lock"])
        #expect(locked.status == 0, "\(locked)")
        try fixture.startServer()
    }

    @Test("a service started while locked finds items by any attribute in the locked list; after unlock GetSecrets returns them")
    func serviceStartedLockedFindsItems() throws {
        let fixture = try lockableFixture()
        let stored = try fixture.secretTool(
            ["store", "--label=Indexed", "xdg:schema", "org.example.Password", "application", "index-app", "username", "ann"],
            input: "indexed-secret")
        #expect(stored.status == 0, "\(stored)")
        #expect(try fixture.secretTool(["store", "--label=Other", "xdg:schema", "org.example.Other", "username", "bob"], input: "other").status == 0)
        try restartLocked(fixture)
        let result = try fixture.python(Self.client + """
            print("locked", bool(prop(LOGIN, "org.freedesktop.Secret.Collection", "Locked")))
            unlocked, locked = search(xdg_schema="org.example.Password")
            print("schema", len(unlocked), len(locked))
            item = locked[0]
            print("two", search(application="index-app", username="ann") == ([], [item]))
            print("collection search", [str(p) for p in iface(LOGIN, "org.freedesktop.Secret.Collection").SearchItems({"username": "ann"})] == [item])
            print("miss", search(application="index-app", username="bob"), search(application="other-app"))
            print("other", len(search(username="bob")[1]))
            print("in Items", item in [str(p) for p in prop(LOGIN, "org.freedesktop.Secret.Collection", "Items")])
            done, prompt = service.Unlock([item])
            print("unlock asks", len(done), prompt != "/")
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            print("locked secrets", len(service.GetSecrets([item], session)))
            print("unlock tool", tool("unlock", "--stdin", stdin="correct horse\\n"))
            print("signal", wait_for(lambda: (LOGIN, False) in changes))
            secrets = service.GetSecrets([item], session)
            print("secret", bytes(secrets[item][2]).decode())
            print("unlocked search", search(xdg_schema="org.example.Password") == ([item], []))
            """, [BusFixture.product("keysmith").path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            locked True
            schema 0 1
            two True
            collection search True
            miss ([], []) ([], [])
            other 1
            in Items True
            unlock asks 0 True
            locked secrets 0
            unlock tool 0
            signal True
            secret indexed-secret
            unlocked search True

            """, "\(result)")
    }

    @Test("Unicode twins of an attribute value do not find each other while locked")
    func unicodeTwinsStayApart() throws {
        let fixture = try lockableFixture()
        #expect(try fixture.secretTool(["store", "--label=Composed", "place", "caf\u{E9}", "account", "composed"], input: "one").status == 0)
        #expect(try fixture.secretTool(["store", "--label=Decomposed", "place", "cafe\u{301}", "account", "decomposed"], input: "two").status == 0)
        try restartLocked(fixture)
        let result = try fixture.python(Self.client + """
            composed = search(place="caf\\u00e9")[1]
            decomposed = search(place="cafe\\u0301")[1]
            print("composed", len(composed), "decomposed", len(decomposed), "apart", set(composed) != set(decomposed))
            print("plain", len(search(place="cafe")[1]))
            print("unlock tool", tool("unlock", "--stdin", stdin="correct horse\\n"))
            print("signal", wait_for(lambda: (LOGIN, False) in changes))
            accounts = lambda paths: [str(prop(p, "org.freedesktop.Secret.Item", "Attributes")["account"]) for p in paths]
            print(accounts(composed), accounts(decomposed))
            """, [BusFixture.product("keysmith").path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            composed 1 decomposed 1 apart True
            plain 0
            unlock tool 0
            signal True
            ['composed'] ['decomposed']

            """, "\(result)")
    }

    @Test("an item deleted or changed while unlocked is not found by its old attributes while locked; one the keysmith tool added is")
    func deletionsChangesAndToolItems() throws {
        let fixture = try lockableFixture()
        #expect(try fixture.secretTool(["store", "--label=Gone", "kind", "deleted-kind", "account", "gone"], input: "gone").status == 0)
        #expect(try fixture.secretTool(["store", "--label=Kept", "kind", "kept-kind", "account", "kept"], input: "kept").status == 0)
        #expect(try fixture.secretTool(["store", "--label=Moved", "kind", "old-kind", "account", "moved"], input: "moved").status == 0)
        #expect(try fixture.secretTool(["clear", "kind", "deleted-kind"]).status == 0)
        // Attributes changed through the service.
        let changed = try fixture.python("""
            found = service.SearchItems({"kind": "old-kind"})[0]
            iface(found[0], "org.freedesktop.DBus.Properties").Set("org.freedesktop.Secret.Item", "Attributes",
                dbus.Dictionary({"kind": "new-kind", "account": "moved", "service": "moved-svc"}, signature="ss"))
            print(len(found))
            """)
        #expect(changed.status == 0 && changed.output == "1\n", "\(changed)")
        // Added by the tool while the service is not running: indexed once the service reads the unlocked collection.
        #expect(try fixture.stopServer() == 0)
        let added = try fixture.keysmith(["add-generic-password", "-s", "tool-svc", "-a", "tool-acct", "--stdin"], input: "from-tool\n")
        #expect(added.status == 0, "\(added)")
        try fixture.startServer()
        #expect(try fixture.secretTool(["lookup", "kind", "kept-kind"]).output == "kept")
        try restartLocked(fixture)
        let result = try fixture.python(Self.client + """
            print("deleted", search(kind="deleted-kind"))
            print("kept", len(search(kind="kept-kind")[1]))
            print("old", search(kind="old-kind"), "new", len(search(kind="new-kind")[1]))
            print("tool", len(search(service="tool-svc", account="tool-acct")[1]))
            """, [BusFixture.product("keysmith").path])
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            deleted ([], [])
            kept 1
            old ([], []) new 1
            tool 1

            """, "\(result)")
    }

    @Test("the index item holds keyed hashes, no attribute name or value in plaintext")
    func indexHoldsNoPlaintext() throws {
        let fixture = try lockableFixture()
        let canaries = ["canary-attribute-name-31415", "canary-attribute-value-27182", "canary-schema-16180"]
        let stored = try fixture.secretTool(
            ["store", "--label=Canary", canaries[0], canaries[1], "xdg:schema", canaries[2], "account", "canary"], input: "pw")
        #expect(stored.status == 0, "\(stored)")
        #expect(try fixture.stopServer() == 0)
        let environment = KeychainEnvironment(directory: fixture.keychain, accessGroups: ["keysmith.secret-service"])
        let found: [String: Any]? = KeychainEnvironment.withEnvironment(environment) {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccessGroup as String: "keysmith.secret-service",
                kSecAttrService as String: "org.freedesktop.Secret.AttributeIndex", kSecAttrAccount as String: "login",
                kSecReturnData as String: kCFBooleanTrue as Any, kSecReturnAttributes as String: kCFBooleanTrue as Any,
            ]
            var result: AnyObject?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            #expect(status == errSecSuccess, "SecItemCopyMatching: \(status)")
            return result as? [String: Any]
        }
        let item = try #require(found)
        #expect(item[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
        var indexBytes: [UInt8] = []
        if let data = item[kSecValueData as String] as? NSData {
            indexBytes = [UInt8](repeating: 0, count: data.length)
            indexBytes.withUnsafeMutableBytes { buffer in if let base = buffer.baseAddress { data.getBytes(base, length: data.length) } }
        } else if let data = item[kSecValueData as String] as? Data {
            indexBytes = [UInt8](data)
        }
        // Header, key, one item and its three hashes (one per attribute): nothing else.
        #expect(indexBytes.count == 5 + 32 + 4 + 16 + 4 + 3 * 32, "\(indexBytes.count) bytes")
        for (key, value) in item {
            var bytes = indexBytes
            if let text = value as? String { bytes += Array(text.utf8) }
            if let data = value as? Data { bytes += [UInt8](data) }
            for canary in canaries + ["canary"] {
                let needle = Array(canary.utf8)
                let contains = bytes.count >= needle.count && (0...(bytes.count - needle.count)).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
                #expect(!contains, "the index item's \(key) holds an attribute in plaintext")
            }
        }
    }
}
