/// A session a client opened with `OpenSession`: the cipher its secrets travel under, and the
/// client (its unique bus name). It ends with `Close`, or when the client leaves the bus.
struct ClientSession {
    let number: Int
    let owner: String
    let cipher: any SecretTransferCipher
}
