// @keysmith/secure-store: a namespaced secure store for Node and Electron, backed by
// Keysmith's keychain in process (on Linux, no desktop keyring or D-Bus needed).
export { SecureStore, type PrefixMigrationReport } from './SecureStore';
export { SecureStoreError, SecureStoreErrorCode } from './SecureStoreError';
export { SecureStoreAccessible, type SecureStoreEvent, type SecureStoreOptions } from './SecureStoreOptions';
export type { BiometricProtection, MigrationReport, SecureStoreProvider } from './SecureStoreProvider';
export { KeysmithProvider } from './KeysmithProvider';
export {
  ReactNativeKeychainProvider,
  type ReactNativeKeychainModule,
  type ReactNativeKeychainCredentials,
  type ReactNativeKeychainGetOptions,
  type ReactNativeKeychainSetOptions,
} from './ReactNativeKeychainProvider';
