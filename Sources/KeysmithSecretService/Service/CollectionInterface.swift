import Foundation
import Keysmith

/// `org.freedesktop.Secret.Collection` and `org.freedesktop.Secret.Item`.
extension SecretServiceServer {
    func collectionMethod(_ call: BusCall, _ member: String, _ collection: any SecretCollection) throws(SecretServiceError) -> [DBusValue]? {
        let path = ObjectPath.collectionPath(collection.identifier)
        switch member {
        case "Delete":
            try expect(call, "")
            try collection.delete()
            collections.removeAll { ObjectPath.same($0.identifier, collection.identifier) }
            aliases.removeAll { ObjectPath.same($0.collection, collection.identifier) }
            emit(ObjectPath.servicePath, "org.freedesktop.Secret.Service", "CollectionDeleted", [.objectPath(path)])
            propertiesChanged(ObjectPath.servicePath, "org.freedesktop.Secret.Service", [("Collections", collectionsValue)])
            return [.objectPath(ObjectPath.none)]
        case "SearchItems":
            let query = try ItemAttributes(dbus: arguments(call, "a{ss}")[0])
            return [.objectPaths(itemPaths(collection, try collection.search(query)))]
        case "CreateItem":
            let values = try arguments(call, "a{sv}(oayays)b")
            var label = ""
            var attributes = ItemAttributes()
            if case .dictionary(_, _, let entries) = values[0] {
                for (key, value) in entries {
                    let name = key.text ?? ""
                    if ObjectPath.same(name, "org.freedesktop.Secret.Item.Label") {
                        guard case .string(let text) = value.unwrapped else { throw .invalidArguments("an item's label is a string.") }
                        label = text
                    } else if ObjectPath.same(name, "org.freedesktop.Secret.Item.Attributes") {
                        attributes = try ItemAttributes(dbus: value)
                    }
                }
            }
            guard label.utf8.count <= maximumLabelBytes else { throw .invalidArguments("a label has at most \(maximumLabelBytes) bytes.") }
            guard case .boolean(let replace) = values[2] else { throw .invalidArguments("replace is a boolean.") }
            var secret = try storedSecret(values[1], caller: call.sender)
            defer { secret.bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } } }
            let creation = try collection.createItem(label: label, attributes: attributes, secret: secret, replace: replace)
            let itemPath = ObjectPath.itemPath(collection.identifier, creation.identifier)
            switch creation {
            case .created:
                emit(path, "org.freedesktop.Secret.Collection", "ItemCreated", [.objectPath(itemPath)])
                itemsChanged(collection)
            case .replaced:
                emit(path, "org.freedesktop.Secret.Collection", "ItemChanged", [.objectPath(itemPath)])
            }
            return [.objectPath(itemPath), .objectPath(ObjectPath.none)]
        default:
            throw unknownMethod(call)
        }
    }

    func itemMethod(_ call: BusCall, _ member: String) throws(SecretServiceError) -> [DBusValue]? {
        let (collection, item) = try resolveItem(call.path)
        let itemPath = ObjectPath.itemPath(collection.identifier, item.identifier)
        let collectionPath = ObjectPath.collectionPath(collection.identifier)
        switch member {
        case "Delete":
            try expect(call, "")
            try collection.deleteItem(item.identifier)
            emit(collectionPath, "org.freedesktop.Secret.Collection", "ItemDeleted", [.objectPath(itemPath)])
            itemsChanged(collection)
            return [.objectPath(ObjectPath.none)]
        case "GetSecret":
            let session = try session(arguments(call, "o")[0].text ?? "", caller: call.sender)
            var secret = try collection.secret(of: item.identifier)
            defer { secret.bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } } }
            let value = try secretValue(secret, session)
            readLog?.record(call: call, collection: collection, item: item)
            return [value]
        case "SetSecret":
            var secret = try storedSecret(arguments(call, "(oayays)")[0], caller: call.sender)
            defer { secret.bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } } }
            try collection.setSecret(of: item.identifier, to: secret)
            emit(collectionPath, "org.freedesktop.Secret.Collection", "ItemChanged", [.objectPath(itemPath)])
            return []
        default:
            throw unknownMethod(call)
        }
    }

    // MARK: org.freedesktop.DBus.Properties

    func properties(_ call: BusCall, _ object: ObjectPath) throws(SecretServiceError) -> [DBusValue]? {
        switch call.member {
        case "Get":
            let values = try arguments(call, "ss")
            let all = try propertyValues(object, interface: values[0].text ?? "")
            guard let found = all.first(where: { ObjectPath.same($0.0, values[1].text ?? "") }) else {
                throw .invalidArguments("\(call.path) has no property \(values[1].text ?? "") in \(values[0].text ?? "").")
            }
            return [.variant(found.1)]
        case "GetAll":
            let values = try arguments(call, "s")
            return [.properties(try propertyValues(object, interface: values[0].text ?? ""))]
        case "Set":
            let values = try arguments(call, "ssv")
            try setProperty(object, call, interface: values[0].text ?? "", name: values[1].text ?? "", value: values[2].unwrapped)
            return []
        default:
            throw unknownMethod(call)
        }
    }

    /// The properties of an object in one interface (every interface of it for an empty name).
    func propertyValues(_ object: ObjectPath, interface: String) throws(SecretServiceError) -> [(String, DBusValue)] {
        func wants(_ name: String) -> Bool { interface.isEmpty || ObjectPath.same(interface, name) }
        switch object {
        case .service:
            return wants("org.freedesktop.Secret.Service") ? [("Collections", collectionsValue)] : []
        case .collection(let part, let name):
            guard wants("org.freedesktop.Secret.Collection"), let collection = collection(part: part, name: name) else { return [] }
            let items = try collection.items()
            return [
                ("Items", .objectPaths(itemPaths(collection, items))), ("Label", .string(collection.label)),
                ("Locked", .boolean(collection.isLocked)), ("Created", .uint64(collection.created)),
                ("Modified", .uint64(items.map(\.modified).max().map { max($0, collection.created) } ?? collection.modified)),
            ]
        case .item(let part, let name, let itemName):
            guard wants("org.freedesktop.Secret.Item"), let collection = collection(part: part, name: name),
                let item = try collection.item(itemName)
            else { return [] }
            return [
                ("Locked", .boolean(collection.isLocked)), ("Attributes", item.attributes.dbusValue), ("Label", .string(item.label)),
                ("Created", .uint64(item.created)), ("Modified", .uint64(item.modified)),
            ]
        default:
            return []
        }
    }

    private func setProperty(_ object: ObjectPath, _ call: BusCall, interface: String, name: String, value: DBusValue) throws(SecretServiceError) {
        switch object {
        case .collection(let part, let collectionName)
        where ObjectPath.same(interface, "org.freedesktop.Secret.Collection") && ObjectPath.same(name, "Label"):
            guard let collection = collection(part: part, name: collectionName) else { throw .noSuchObject("there is no collection at \(call.path).") }
            guard case .string(let label) = value, label.utf8.count <= maximumLabelBytes else {
                throw .invalidArguments("Label is a string of at most \(maximumLabelBytes) bytes.")
            }
            try collection.setLabel(label)
            let path = ObjectPath.collectionPath(collection.identifier)
            propertiesChanged(path, "org.freedesktop.Secret.Collection", [("Label", .string(label))])
            emit(ObjectPath.servicePath, "org.freedesktop.Secret.Service", "CollectionChanged", [.objectPath(path)])
        case .item where ObjectPath.same(interface, "org.freedesktop.Secret.Item"):
            let (collection, item) = try resolveItem(call.path)
            let itemPath = ObjectPath.itemPath(collection.identifier, item.identifier)
            if ObjectPath.same(name, "Label") {
                guard case .string(let label) = value, label.utf8.count <= maximumLabelBytes else {
                    throw .invalidArguments("Label is a string of at most \(maximumLabelBytes) bytes.")
                }
                try collection.setLabel(of: item.identifier, to: label)
                propertiesChanged(itemPath, "org.freedesktop.Secret.Item", [("Label", .string(label))])
            } else if ObjectPath.same(name, "Attributes") {
                let attributes = try ItemAttributes(dbus: value)
                try collection.setAttributes(of: item.identifier, to: attributes)
                propertiesChanged(itemPath, "org.freedesktop.Secret.Item", [("Attributes", attributes.dbusValue)])
            } else {
                throw SecretServiceError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(name) cannot be set.")
            }
            emit(ObjectPath.collectionPath(collection.identifier), "org.freedesktop.Secret.Collection", "ItemChanged", [.objectPath(itemPath)])
        default:
            throw SecretServiceError(name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be set on \(call.path).")
        }
    }
}
