import Foundation
import Testing

/// secret-tool (libsecret) against keysmith secret-service on a private bus, and the keysmith
/// tool reading and writing the same items.
@Suite("Secret Service with secret-tool and the keysmith tool")
struct ServiceSecretToolTests {
    @Test("store, lookup, search and clear with secret-tool")
    func storeLookupSearchClear() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let stored = try fixture.secretTool(["store", "--label=Mail", "service", "mail.example", "account", "ann"], input: "s3cret")
        #expect(stored.status == 0, "\(stored)")
        let found = try fixture.secretTool(["lookup", "service", "mail.example", "account", "ann"])
        #expect(found.status == 0 && found.output == "s3cret", "\(found)")
        let search = try fixture.secretTool(["search", "--all", "service", "mail.example"])
        #expect(search.status == 0, "\(search)")
        #expect(search.output.contains("label = Mail"), "\(search)")
        #expect(search.error.contains("attribute.account = ann") || search.output.contains("attribute.account = ann"), "\(search)")
        // Replacing: the same attributes get the new secret, not a second item.
        #expect(try fixture.secretTool(["store", "--label=Mail", "service", "mail.example", "account", "ann"], input: "n3w").status == 0)
        #expect(try fixture.secretTool(["lookup", "service", "mail.example", "account", "ann"]).output == "n3w")
        let cleared = try fixture.secretTool(["clear", "service", "mail.example", "account", "ann"])
        #expect(cleared.status == 0, "\(cleared)")
        #expect(try fixture.secretTool(["lookup", "service", "mail.example", "account", "ann"]).status != 0)
        #expect(try fixture.stopServer() == 0)
    }

    @Test("an item secret-tool stores is found by keysmith find-generic-password, and the reverse")
    func interoperatesWithTheTool() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=Label L", "service", "S", "account", "A"], input: "from-secret-tool").status == 0)
        let read = try fixture.keysmith(["find-generic-password", "-s", "S", "-a", "A", "-w"])
        #expect(read.status == 0 && read.output == "from-secret-tool\n", "\(read)")
        let attributes = try fixture.keysmith(["--json", "find-generic-password", "-s", "S", "-a", "A"])
        #expect(attributes.output.contains("\"label\" : \"Label L\"") || attributes.output.contains("\"label\":\"Label L\""), "\(attributes)")

        let added = try fixture.keysmith(["add-generic-password", "-s", "S2", "-a", "A2", "--stdin"], input: "from-keysmith\n")
        #expect(added.status == 0, "\(added)")
        let looked = try fixture.secretTool(["lookup", "service", "S2", "account", "A2"])
        #expect(looked.status == 0 && looked.output == "from-keysmith", "\(looked)")
        // A change through the service is what the tool reads next.
        #expect(try fixture.secretTool(["store", "--label=L2", "service", "S2", "account", "A2"], input: "changed").status == 0)
        #expect(try fixture.keysmith(["find-generic-password", "-s", "S2", "-a", "A2", "-w"]).output == "changed\n")
        // Deleted with the tool: gone for secret-tool too.
        #expect(try fixture.keysmith(["delete-generic-password", "-s", "S2", "-a", "A2"]).status == 0)
        #expect(try fixture.secretTool(["lookup", "service", "S2", "account", "A2"]).status != 0)
    }

    @Test("other attributes are kept, returned and searchable, and not stored in plaintext")
    func otherAttributes() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let attributes = ["xdg:schema", "org.example.Password", "username", "bob-the-unique-user", "application", "demo-app"]
        #expect(try fixture.secretTool(["store", "--label=Other"] + attributes, input: "pw").status == 0)
        #expect(try fixture.secretTool(["lookup", "username", "bob-the-unique-user"]).output == "pw")
        #expect(try fixture.secretTool(["lookup", "application", "demo-app", "username", "bob-the-unique-user"]).output == "pw")
        #expect(try fixture.secretTool(["lookup", "application", "other-app"]).status != 0)
        let search = try fixture.secretTool(["search", "--all", "application", "demo-app"])
        #expect((search.output + search.error).contains("attribute.username = bob-the-unique-user"), "\(search)")
        // Nothing in the keychain directory holds the attribute values as bytes.
        for name in try FileManager.default.contentsOfDirectory(atPath: fixture.keychain.path) {
            let data = try Data(contentsOf: fixture.keychain.appendingPathComponent(name))
            #expect(data.range(of: Data("bob-the-unique-user".utf8)) == nil, "\(name) holds an attribute in plaintext")
        }
        // Kept across a restart of the service.
        #expect(try fixture.stopServer() == 0)
        try fixture.startServer()
        #expect(try fixture.secretTool(["lookup", "username", "bob-the-unique-user"]).output == "pw")
    }

    @Test("the session collection keeps items in memory only, and aliases name the collections")
    func sessionCollectionAndAliases() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let aliases = try fixture.python("""
            for name in ["default", "login", "session", "nothing"]:
                print(name, service.ReadAlias(name))
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            alias = iface(BASE + "/aliases/session", "org.freedesktop.Secret.Collection")
            props = {"org.freedesktop.Secret.Item.Label": "in memory", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"kind": "memo"}, signature="ss")}
            item, prompt = alias.CreateItem(props, (session, b"", b"memory-secret", "text/plain"), False)
            print("item", item)
            print("secret", bytes(iface(item, "org.freedesktop.Secret.Item").GetSecret(session)[2]).decode())
            print("via default alias", len(iface(BASE + "/aliases/default", "org.freedesktop.Secret.Collection").SearchItems({"kind": "memo"})))
            print("label", prop(BASE + "/aliases/default", "org.freedesktop.Secret.Collection", "Label"))
            """)
        #expect(aliases.status == 0, "\(aliases)")
        #expect(aliases.output.contains("default /org/freedesktop/secrets/collection/login"), "\(aliases)")
        #expect(aliases.output.contains("login /org/freedesktop/secrets/collection/login"), "\(aliases)")
        #expect(aliases.output.contains("session /org/freedesktop/secrets/collection/session"), "\(aliases)")
        #expect(aliases.output.contains("nothing /\n"), "\(aliases)")
        #expect(aliases.output.contains("item /org/freedesktop/secrets/collection/session/"), "\(aliases)")
        #expect(aliases.output.contains("secret memory-secret"), "\(aliases)")
        #expect(aliases.output.contains("via default alias 0"), "\(aliases)")
        // Nothing of it reached the keychain.
        let dump = try fixture.keysmith(["dump-keychain"])
        #expect(!dump.output.contains("in memory"), "\(dump)")
    }
}
