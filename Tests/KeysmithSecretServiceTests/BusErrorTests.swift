import Foundation
import Testing

/// Bad input answered with the spec's errors, and nothing stored lost afterwards.
@Suite("Secret Service errors")
struct BusErrorTests {
    /// Stores one item and returns a check that it is still there, unchanged.
    private func storeWitness(_ fixture: BusFixture) throws -> () throws -> Void {
        #expect(try fixture.secretTool(["store", "--label=Witness", "service", "witness", "account", "w"], input: "still-here").status == 0)
        return {
            let found = try fixture.secretTool(["lookup", "service", "witness", "account", "w"])
            #expect(found.status == 0 && found.output == "still-here", "\(found)")
        }
    }

    @Test("unknown object paths answer NoSuchObject")
    func unknownObjects() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let stillThere = try storeWitness(fixture)
        let result = try fixture.python("""
            paths = [BASE + "/collection/nothing", BASE + "/collection/login/00000000000000000000000000000000",
                     BASE + "/collection/login/not_hex", BASE + "/aliases/nothing", BASE + "/session/999", BASE + "/prompt/999"]
            for path in paths:
                print(path, error_name(lambda: iface(path, "org.freedesktop.DBus.Properties").GetAll("")))
            print("item", error_name(lambda: iface(BASE + "/collection/login/00000000000000000000000000000000", "org.freedesktop.Secret.Item").Delete()))
            print("elsewhere", error_name(lambda: iface("/org/example", "org.freedesktop.DBus.Properties").GetAll("")))
            """)
        #expect(result.status == 0, "\(result)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 8, "\(result)")
        for line in lines.prefix(7) {
            #expect(line.hasSuffix("org.freedesktop.Secret.Error.NoSuchObject"), "\(line)")
        }
        #expect(lines.last?.hasSuffix("org.freedesktop.DBus.Error.UnknownObject") == true, "\(result)")
        try stillThere()
    }

    @Test("wrong signatures answer InvalidArgs")
    func wrongSignatures() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let stillThere = try storeWitness(fixture)
        let calls: [(String, String, String, [String])] = [
            ("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "SearchItems", ["s", "service"]),
            ("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "OpenSession", ["ss", "plain", ""]),
            ("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "GetSecrets", ["ao", "0"]),
            ("/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias", ["i", "3"]),
            ("/org/freedesktop/secrets/collection/login", "org.freedesktop.Secret.Collection", "CreateItem", ["a{sv}b", "0", "true"]),
            ("/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties", "Get", ["s", "org.freedesktop.Secret.Collection"]),
            ("/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties", "Set", ["ssv", "org.freedesktop.Secret.Collection", "Label", "i", "4"]),
        ]
        for (path, interface, method, arguments) in calls {
            let result = try fixture.call(path, interface, method, arguments)
            #expect(result.status != 0, "\(method): \(result)")
            #expect(result.error.contains("takes arguments") || result.error.contains("Invalid") || result.error.contains("is a string"), "\(method): \(result)")
        }
        // The error names, as a client sees them.
        let names = try fixture.python("""
            print(error_name(lambda: service.SearchItems("service", signature="s")))
            print(error_name(lambda: service.OpenSession("plain", "x", signature="ss")))
            print(error_name(lambda: service.OpenSession("rot13", dbus.String("", variant_level=1))))
            """)
        #expect(names.output == "org.freedesktop.DBus.Error.InvalidArgs\norg.freedesktop.DBus.Error.InvalidArgs\norg.freedesktop.DBus.Error.NotSupported\n", "\(names)")
        try stillThere()
    }

    @Test("huge attributes and labels are refused with InvalidArgs, nothing stored")
    func hugeAttributes() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let stillThere = try storeWitness(fixture)
        let result = try fixture.python("""
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            login = iface(BASE + "/collection/login", "org.freedesktop.Secret.Collection")
            def create(attributes, label="L"):
                props = {"org.freedesktop.Secret.Item.Label": label, "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(attributes, signature="ss")}
                return error_name(lambda: login.CreateItem(props, (session, b"", b"x", "text/plain"), True))
            print(create({"service": "big", "note": "v" * 100000}))
            print(create({"service": "many", **{"a%d" % i: "v" for i in range(1000)}}))
            print(create({"service": "total", **{"a%d" % i: "v" * 10000 for i in range(10)}}))
            print(create({"service": "label"}, label="l" * 100000))
            print(error_name(lambda: service.SearchItems({"note": "v" * 100000})))
            print(len(service.SearchItems({"service": "big"})[0]) + len(service.SearchItems({"service": "many"})[0]) + len(service.SearchItems({"service": "label"})[0]))
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == String(repeating: "org.freedesktop.DBus.Error.InvalidArgs\n", count: 5) + "0\n", "\(result)")
        try stillThere()
    }

    @Test("a secret in a session that is not the caller's is refused with NoSession")
    func anotherClientsSession() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let stillThere = try storeWitness(fixture)
        let result = try fixture.python("""
            other = dbus.bus.BusConnection(sys.argv[1])
            their = dbus.Interface(other.get_object("org.freedesktop.secrets", BASE), "org.freedesktop.Secret.Service")
            their_session = their.OpenSession("plain", dbus.String("", variant_level=1))[1]
            items = service.SearchItems({"service": "witness"})[0]
            item = iface(items[0], "org.freedesktop.Secret.Item")
            print(error_name(lambda: item.GetSecret(their_session)))
            print(error_name(lambda: service.GetSecrets(items, their_session)))
            print(error_name(lambda: item.SetSecret((their_session, b"", b"overwritten", "text/plain"))))
            print(error_name(lambda: item.GetSecret(BASE + "/session/12345")))
            mine = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            print(error_name(lambda: item.SetSecret((mine, b"\\x01" * 16, b"overwritten", "text/plain"))))
            print(bytes(item.GetSecret(mine)[2]).decode())
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            org.freedesktop.Secret.Error.NoSession
            org.freedesktop.Secret.Error.NoSession
            org.freedesktop.Secret.Error.NoSession
            org.freedesktop.Secret.Error.NoSession
            org.freedesktop.DBus.Error.InvalidArgs
            still-here

            """, "\(result)")
        try stillThere()
    }
}
