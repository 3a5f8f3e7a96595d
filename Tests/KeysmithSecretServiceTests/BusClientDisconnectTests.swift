import Foundation
import Testing

/// Sessions end when their client leaves the bus.
@Suite("Secret Service sessions of clients that leave")
struct BusClientDisconnectTests {
    @Test("a client that disconnects mid-session loses its session; the others keep theirs")
    func disconnectEndsTheSession() throws {
        let fixture = try BusFixture()
        try fixture.startServer()
        #expect(try fixture.secretTool(["store", "--label=K", "service", "kept", "account", "k"], input: "kept-secret").status == 0)
        let result = try fixture.python("""
            leaving = dbus.bus.BusConnection(sys.argv[1])
            theirs = dbus.Interface(leaving.get_object("org.freedesktop.secrets", BASE), "org.freedesktop.Secret.Service")
            gone = theirs.OpenSession("plain", dbus.String("", variant_level=1))[1]
            mine = service.OpenSession("plain", dbus.String("", variant_level=1))[1]
            def sessions():
                xml = iface(BASE + "/session", "org.freedesktop.DBus.Introspectable").Introspect()
                return sorted(BASE + "/session/" + part.split('"')[0] for part in xml.split('<node name="')[1:])
            print("before", gone in sessions(), mine in sessions())
            item = dbus.Interface(leaving.get_object("org.freedesktop.secrets", service.SearchItems({"service": "kept"})[0][0]), "org.freedesktop.Secret.Item")
            print("mid-session", bytes(item.GetSecret(gone)[2]).decode())
            leaving.close()
            deadline = time.time() + 30
            while gone in sessions() and time.time() < deadline:
                time.sleep(0.05)
            print("after", gone in sessions(), mine in sessions())
            print(error_name(lambda: iface(gone, "org.freedesktop.Secret.Session").Close()))
            print(bytes(iface(service.SearchItems({"service": "kept"})[0][0], "org.freedesktop.Secret.Item").GetSecret(mine)[2]).decode())
            """)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == """
            before True True
            mid-session kept-secret
            after False True
            org.freedesktop.Secret.Error.NoSuchObject
            kept-secret

            """, "\(result)")
        #expect(try fixture.secretTool(["lookup", "service", "kept", "account", "k"]).output == "kept-secret")
    }
}
