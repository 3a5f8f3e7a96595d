import Foundation
import Testing

/// Collections made with CreateCollection (their own access group), writable properties and
/// the Item signals.
@Suite("Secret Service collections and item properties")
struct CollectionCreateTests {
    @Test("a created collection keeps its items across a restart; Label and Attributes are writable; Item signals are emitted")
    func createdCollection() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        let created = try fixture.python("""
            signals = []
            def on_signal(item, member=None, path=None): signals.append((member, str(path)))
            for member in ["ItemCreated", "ItemChanged", "ItemDeleted"]:
                bus.add_signal_receiver(on_signal, signal_name=member, dbus_interface="org.freedesktop.Secret.Collection", member_keyword="member", path_keyword="path")
            context = GLib.MainContext.default()
            def pump(count):
                deadline = time.time() + 30
                while len(signals) < count and time.time() < deadline:
                    context.iteration(False); time.sleep(0.01)
            path, prompt = service.CreateCollection({"org.freedesktop.Secret.Collection.Label": dbus.String("Work Stuff", variant_level=1)}, "")
            print("collection", path, prompt)
            print("listed", path in service.Get("org.freedesktop.Secret.Service", "Collections", dbus_interface="org.freedesktop.DBus.Properties"))
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            work = iface(path, "org.freedesktop.Secret.Collection")
            props = {"org.freedesktop.Secret.Item.Label": "Work item", "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"service": "work-svc", "account": "w", "team": "blue"}, signature="ss")}
            item, _ = work.CreateItem(props, (session, b"", b"work-secret", "text/plain"), False)
            pump(1)
            properties = iface(item, "org.freedesktop.DBus.Properties")
            properties.Set("org.freedesktop.Secret.Item", "Label", dbus.String("Renamed", variant_level=1))
            properties.Set("org.freedesktop.Secret.Item", "Attributes", dbus.Dictionary({"service": "work-svc", "account": "w", "team": "red"}, signature="ss", variant_level=1))
            pump(3)
            print("label", properties.Get("org.freedesktop.Secret.Item", "Label"))
            print("team", properties.Get("org.freedesktop.Secret.Item", "Attributes")["team"])
            print("found", len(work.SearchItems({"team": "red"})), len(work.SearchItems({"team": "blue"})))
            print("not in login", len(iface(BASE + "/collection/login", "org.freedesktop.Secret.Collection").SearchItems({"team": "red"})))
            print("signals", [member for member, _ in signals])
            iface(path, "org.freedesktop.DBus.Properties").Set("org.freedesktop.Secret.Collection", "Label", dbus.String("Work", variant_level=1))
            print("collection label", prop(path, "org.freedesktop.Secret.Collection", "Label"))
            """)
        #expect(created.status == 0, "\(created)")
        #expect(created.output.contains("collection /org/freedesktop/secrets/collection/Work_Stuff /\n"), "\(created)")
        #expect(created.output.contains("listed True"), "\(created)")
        #expect(created.output.contains("label Renamed"), "\(created)")
        #expect(created.output.contains("team red"), "\(created)")
        #expect(created.output.contains("found 1 0"), "\(created)")
        #expect(created.output.contains("not in login 0"), "\(created)")
        #expect(created.output.contains("signals ['ItemCreated', 'ItemChanged', 'ItemChanged']"), "\(created)")
        #expect(created.output.contains("collection label Work"), "\(created)")
        #expect(try fixture.stopServer() == 0)
        try fixture.startServer()
        let again = try fixture.python("""
            path = BASE + "/collection/Work_Stuff"
            print("label", prop(path, "org.freedesktop.Secret.Collection", "Label"))
            session = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            items = iface(path, "org.freedesktop.Secret.Collection").SearchItems({"team": "red"})
            print("secret", bytes(iface(items[0], "org.freedesktop.Secret.Item").GetSecret(session)[2]).decode())
            iface(path, "org.freedesktop.Secret.Collection").Delete()
            print("deleted", path in service.Get("org.freedesktop.Secret.Service", "Collections", dbus_interface="org.freedesktop.DBus.Properties"))
            """)
        #expect(again.output == "label Work\nsecret work-secret\ndeleted False\n", "\(again)")
        #expect(try fixture.keysmith(["find-generic-password", "-s", "work-svc", "-a", "w"]).status == 44)
    }
}

/// The login collection's label.
@Suite("Secret Service login collection label")
struct CollectionLoginLabelTests {
    @Test("the login collection's Label is writable and kept across a restart, outside its items")
    func loginLabel() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=One", "service", "one", "account", "1"], input: "1").status == 0)
        let renamed = try fixture.python("""
            login = BASE + "/collection/login"
            print(prop(login, "org.freedesktop.Secret.Collection", "Label"))
            iface(login, "org.freedesktop.DBus.Properties").Set("org.freedesktop.Secret.Collection", "Label", dbus.String("My keyring", variant_level=1))
            print(prop(login, "org.freedesktop.Secret.Collection", "Label"), len(prop(login, "org.freedesktop.Secret.Collection", "Items")))
            """)
        #expect(renamed.output == "Login\nMy keyring 1\n", "\(renamed)")
        #expect(try fixture.stopServer() == 0)
        try fixture.startServer()
        let again = try fixture.python("""
            login = BASE + "/collection/login"
            print(prop(login, "org.freedesktop.Secret.Collection", "Label"), len(prop(login, "org.freedesktop.Secret.Collection", "Items")))
            """)
        #expect(again.output == "My keyring 1\n", "\(again)")
    }
}
