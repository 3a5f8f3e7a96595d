// Keysmith: the typed layer apps use (KeychainStore, SecureStore, KeyRetriever).
@_exported import KeychainServices
