/**
 * What a biometric-protected write did: `protected` when reading the value now requires
 * biometry; otherwise the value was stored with the store's plain accessibility because
 * biometry cannot be used here (no authenticator, nothing enrolled, a simulator), and
 * `reason` says why. No prompt will appear on reads of a value that fell back.
 */
export interface BiometricProtection {
  /** Whether reading the value requires biometry. */
  protected: boolean;
  /** Why biometry was not used, or `null` when the value is protected. */
  reason: string | null;
}

/**
 * What a migration of one service did, key by key (the Swift `MigrationReport`).
 */
export interface MigrationReport {
  /** Keys copied to the new service, verified, then removed from the old one. */
  migrated: string[];
  /** Keys the new service already had with the same value; the old copy was removed. */
  alreadyPresent: string[];
  /** Keys the new service already had with a different value: both copies were kept. */
  conflicts: string[];
  /** Keys that could not be migrated, with the reason; their old copy is left in place. */
  skipped: Record<string, string>;
}

/**
 * The provider layer: atomic operations on text values by service and key, plus what
 * namespaces need (list a service's keys, clear a service, list services). It knows
 * nothing of namespaces, serialization or error codes; {@link SecureStore} does.
 *
 * {@link KeysmithProvider} is the default (Keysmith's keychain, in process);
 * {@link ReactNativeKeychainProvider} adapts react-native-keychain for a React Native app.
 * Another provider can be passed to `SecureStore.configure({ provider })` without changing
 * business code.
 *
 * Every method may throw anything; the store turns it into a {@link SecureStoreError} with
 * `SecureStoreError.fromNative`.
 */
export interface SecureStoreProvider {
  /** A short name for diagnostics, for example `keysmith`. */
  readonly name: string;
  /** Stores `value` under `key` in `service`, replacing any previous value (which stays on failure). */
  setItem(service: string, key: string, value: string): Promise<void>;
  /** The value under `key` in `service`, or `null` when there is none. */
  getItem(service: string, key: string): Promise<string | null>;
  /** Removes the value under `key` in `service`; a missing value is success. */
  removeItem(service: string, key: string): Promise<void>;
  /** Whether a value exists under `key` in `service`, without reading it or prompting. */
  containsItem(service: string, key: string): Promise<boolean>;
  /** The keys of `service`, sorted. */
  getKeys(service: string): Promise<string[]>;
  /** Removes every value of `service`, and only of it. */
  removeAll(service: string): Promise<void>;
  /** The services this provider can see that start with `prefix`, sorted. */
  getServices(prefix: string): Promise<string[]>;
  /**
   * Stores `value` under `key` in `servicePrefix.namespace` behind biometry where it can be
   * used, with the plain accessibility where it cannot.
   */
  setBiometricProtectedItem(servicePrefix: string, namespace: string, key: string, value: string): Promise<BiometricProtection>;
  /**
   * Moves every value of `oldService` into `servicePrefix.namespace` without ever deleting
   * the only copy (write, read back, compare, then delete; a different value already there
   * is a conflict and both are kept). Optional: without it the store does the same steps
   * through the other methods.
   */
  migrateService?(oldService: string, servicePrefix: string, namespace: string): Promise<MigrationReport>;
}
