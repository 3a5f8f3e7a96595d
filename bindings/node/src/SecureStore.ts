import { KeysmithProvider } from './KeysmithProvider';
import { SecureStoreError, SecureStoreErrorCode } from './SecureStoreError';
import { SecureStoreAccessible, type SecureStoreEvent, type SecureStoreOptions } from './SecureStoreOptions';
import type { BiometricProtection, MigrationReport, SecureStoreProvider } from './SecureStoreProvider';
import { ValueCoding } from './ValueCoding';

/** What `SecureStore.migrateFrom` did: one report per namespace found under the old prefix. */
export interface PrefixMigrationReport {
  /** The report of each namespace, by name (`default` for the old prefix's own service). */
  namespaces: Record<string, MigrationReport>;
  /** The services under the old prefix that were not moved because their namespace name
   *  cannot be used (empty, or with control or format characters); their items stay there. */
  leftBehind: string[];
  /** Whether nothing was left behind (no conflict, nothing skipped, in any namespace, and no
   *  service in `leftBehind`). */
  isComplete: boolean;
}

/** react-native-keychain's `ACCESSIBLE` values, accepted by `configure` too. */
const RN_ACCESSIBLE_NAMES: Record<string, SecureStoreAccessible> = {
  AccessibleWhenUnlocked: SecureStoreAccessible.WHEN_UNLOCKED,
  AccessibleWhenUnlockedThisDeviceOnly: SecureStoreAccessible.WHEN_UNLOCKED_THIS_DEVICE_ONLY,
  AccessibleAfterFirstUnlock: SecureStoreAccessible.AFTER_FIRST_UNLOCK,
  AccessibleAfterFirstUnlockThisDeviceOnly: SecureStoreAccessible.AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY,
  AccessibleWhenPasscodeSetThisDeviceOnly: SecureStoreAccessible.WHEN_PASSCODE_SET_THIS_DEVICE_ONLY,
};

const DEFAULT_NAMESPACE = 'default';

/** The key argument of the operations that take none (`getKeys`, `resetNamespace`, `migrateFrom`). */
const NO_KEY: unique symbol = Symbol('no key');

/**
 * The secure store: business code stores and reads values by key and namespace, and the
 * store takes care of services, serialization, size limits, error codes, biometric fallback
 * and migrations. The same design, names and items as the Swift `SecureStore`.
 *
 * ```ts
 * SecureStore.configure({ servicePrefix: 'com.example.app' });
 * await SecureStore.set('access_token', token, 'auth');
 * const token = await SecureStore.get<string>('access_token', 'auth');   // null when absent
 * await SecureStore.resetNamespace('auth');                               // sign out
 * ```
 *
 * - A namespace is the keychain service `<servicePrefix>.<namespace>` (`default` when none
 *   is given), so `keysmith find-generic-password -s com.example.app.auth -a access_token -w`
 *   prints the token above, and a Swift `SecureStore(servicePrefix: "com.example.app")`
 *   reads it with `string(for: "access_token", in: "auth")`.
 * - Strings are stored raw; anything else as JSON; `null`/`undefined` are rejected; values
 *   over the size limit (2048 characters, and four UTF-8 bytes per character) are rejected
 *   with `LIMIT_EXCEEDED`.
 * - A missing item is `null`, never an error (the logger sees `notFound`, not `failure`).
 * - Every failure is a {@link SecureStoreError}: a {@link SecureStoreErrorCode}, a message,
 *   and the native status (OSStatus) when the keychain reported one; never a value.
 */
export class SecureStore {
  private static servicePrefix = 'com.app.securestore';
  private static sizeLimit = 2048;
  private static logger: ((event: SecureStoreEvent) => void) | undefined;
  private static providerInstance: SecureStoreProvider | undefined;

  /** Static API only. */
  private constructor() {}

  /**
   * Sets the store up: the service prefix, the accessibility and access group of the items
   * written, and optionally the size limit, the provider and a logging hook. Call it once
   * at start-up, before the first `set` or `get`; without it the prefix is
   * `com.app.securestore` and the provider Keysmith's keychain with its defaults.
   * @throws {SecureStoreError} `INVALID_VALUE` for an unusable prefix, an unknown or
   *   deprecated accessibility, or a size limit below 1.
   */
  static configure(options: SecureStoreOptions = {}): void {
    const prefix = options.servicePrefix ?? 'com.app.securestore';
    SecureStore.checkPrefix(prefix, 'servicePrefix');
    const accessible = SecureStore.accessibility(options.accessible);
    const sizeLimit = options.sizeLimit ?? 2048;
    if (!Number.isInteger(sizeLimit) || sizeLimit < 1) {
      const given = typeof sizeLimit === 'string' ? `"${sizeLimit}" (a string)` : String(sizeLimit);
      throw new SecureStoreError(SecureStoreErrorCode.INVALID_VALUE, `The size limit must be an integer of at least 1; got ${given}.`);
    }
    const provider =
      options.provider ??
      (() => {
        try {
          return new KeysmithProvider({ accessibility: accessible, accessGroup: options.accessGroup });
        } catch (error) {
          throw SecureStoreError.fromNative(error);
        }
      })();
    SecureStore.servicePrefix = prefix;
    SecureStore.sizeLimit = sizeLimit;
    SecureStore.logger = options.logger;
    SecureStore.providerInstance = provider;
  }

  /** The provider in use (a {@link KeysmithProvider} unless `configure` was given another). */
  static get provider(): SecureStoreProvider {
    if (SecureStore.providerInstance === undefined) {
      try {
        SecureStore.providerInstance = new KeysmithProvider();
      } catch (error) {
        throw SecureStoreError.fromNative(error);
      }
    }
    return SecureStore.providerInstance;
  }

  /** The keychain service of a namespace: `<servicePrefix>.<namespace>`. */
  static service(namespace?: string): string {
    return `${SecureStore.servicePrefix}.${namespace ?? DEFAULT_NAMESPACE}`;
  }

  /**
   * Stores `value` under `key` in namespace `ns` (default `default`), replacing any previous
   * value (which stays in place on failure).
   * @param value A string (stored raw) or anything JSON can represent (stored as JSON).
   * @throws {SecureStoreError} `INVALID_VALUE` for `null`/`undefined` (call `remove`) or a value
   *   without a JSON form, `LIMIT_EXCEEDED` over the size limit, and the keychain's codes.
   */
  static async set(key: string, value: unknown, ns?: string): Promise<void> {
    await SecureStore.run('set', key, ns, async (namespace) => {
      const text = ValueCoding.serialize(value, key, namespace, SecureStore.sizeLimit);
      await SecureStore.provider.setItem(SecureStore.service(namespace), key, text);
      return 'success';
    });
  }

  /**
   * The value under `key` in namespace `ns`: its JSON value, or the stored text when it is
   * not JSON (so a string reads back as stored, unless the string itself is valid JSON such
   * as `"42"`; use {@link getString} for the exact text).
   * @returns The value, or `null` when there is none (a normal branch, not an error).
   */
  static async get<T>(key: string, ns?: string): Promise<T | null> {
    const text = await SecureStore.read('get', key, ns);
    return text === null ? null : ValueCoding.deserialize<T>(text);
  }

  /**
   * The text under `key` in namespace `ns`, exactly as stored.
   * @returns The text, or `null` when there is none.
   * @throws {SecureStoreError} `DECODING_FAILED` when another program stored bytes that are not UTF-8.
   */
  static getString(key: string, ns?: string): Promise<string | null> {
    return SecureStore.read('getString', key, ns);
  }

  // ---- plumbing ----

  /** The stored text, or null. */
  private static async read(operation: string, key: string, ns: string | undefined): Promise<string | null> {
    let text: string | null = null;
    await SecureStore.run(operation, key, ns, async (namespace) => {
      text = await SecureStore.provider.getItem(SecureStore.service(namespace), key);
      return text === null ? 'notFound' : 'success';
    });
    return text;
  }

  /** Removes the value under `key` in namespace `ns`; removing a missing value succeeds. */
  static async remove(key: string, ns?: string): Promise<void> {
    await SecureStore.run('remove', key, ns, async (namespace) => {
      await SecureStore.provider.removeItem(SecureStore.service(namespace), key);
      return 'success';
    });
  }

  /** Whether a value exists under `key` in namespace `ns`. Never reads it, never prompts. */
  static async contains(key: string, ns?: string): Promise<boolean> {
    let exists = false;
    await SecureStore.run('contains', key, ns, async (namespace) => {
      exists = await SecureStore.provider.containsItem(SecureStore.service(namespace), key);
      return exists ? 'success' : 'notFound';
    });
    return exists;
  }

  /**
   * Removes every value of namespace `ns` (default `default`), and nothing else: sign-out
   * clears `auth` without touching other modules' data.
   */
  static async resetNamespace(ns?: string): Promise<void> {
    await SecureStore.run('resetNamespace', NO_KEY, ns, async (namespace) => {
      await SecureStore.provider.removeAll(SecureStore.service(namespace));
      return 'success';
    });
  }

  /** The keys stored in namespace `ns`, sorted. */
  static async getKeys(ns?: string): Promise<string[]> {
    let keys: string[] = [];
    await SecureStore.run('getKeys', NO_KEY, ns, async (namespace) => {
      keys = await SecureStore.provider.getKeys(SecureStore.service(namespace));
      return 'success';
    });
    return keys;
  }

  /**
   * Stores `value` behind biometry where it can be used, as the Swift store does: the
   * capability is checked first; where biometry exists the item requires it (and is readable
   * only while unlocked); where it does not (a machine or simulator without an authenticator,
   * nothing enrolled) the value is stored with the store's accessibility and the result says
   * why, instead of an item that prompts in a loop or can never be read. Biometry locked out
   * is `AUTH_FAILED`, and nothing changes.
   * @returns Whether the value is protected, or the reason it fell back.
   */
  static async setBiometricProtected(key: string, value: unknown, ns?: string): Promise<BiometricProtection> {
    let result: BiometricProtection = { protected: false, reason: null };
    await SecureStore.run('setBiometricProtected', key, ns, async (namespace) => {
      const text = ValueCoding.serialize(value, key, namespace, SecureStore.sizeLimit);
      result = await SecureStore.provider.setBiometricProtectedItem(SecureStore.servicePrefix, namespace, key, text);
      return result.protected ? 'success' : 'fellBack';
    });
    return result;
  }

  /**
   * Moves the values an earlier version stored under another service prefix into this
   * store: each service `<oldServicePrefix>.<namespace>` (and `<oldServicePrefix>` itself, the
   * old default namespace) into `<servicePrefix>.<namespace>`. For each key: write the new
   * item, read it back, compare, and only then delete the old one; a new item that already
   * holds a different value is a conflict, and both copies are kept. Idempotent and
   * crash-safe: run it at every start; the only copy of a value is never deleted.
   *
   * Every service under the old prefix is taken for a namespace of the old store; when other
   * code kept its own services there too, name the namespaces to move.
   * @param options.namespaces Only these namespaces (default: all found).
   * @throws {SecureStoreError} from the first key that fails; its old copy stays.
   */
  static async migrateFrom(oldServicePrefix: string, options: { namespaces?: string[] } = {}): Promise<PrefixMigrationReport> {
    SecureStore.checkPrefix(oldServicePrefix, 'oldServicePrefix');
    const only = options.namespaces;
    if (only !== undefined && (!Array.isArray(only) || only.some((name) => typeof name !== 'string'))) {
      throw new SecureStoreError(
        SecureStoreErrorCode.INVALID_VALUE,
        'The namespaces option of migrateFrom must be an array of namespace names, for example ' +
          "{ namespaces: ['auth'] }; nothing was migrated.",
      );
    }
    const newPrefix = SecureStore.servicePrefix;
    if (oldServicePrefix === newPrefix) {
      throw new SecureStoreError(
        SecureStoreErrorCode.INVALID_VALUE,
        `The old service prefix '${oldServicePrefix}' is this store's own prefix: nothing to migrate.`,
      );
    }
    const provider = SecureStore.provider;
    const report: PrefixMigrationReport = { namespaces: {}, leftBehind: [], isComplete: true };
    let services: string[];
    try {
      services = await provider.getServices(oldServicePrefix);
    } catch (error) {
      throw SecureStoreError.fromNative(error);
    }
    for (const service of services) {
      let namespace: string;
      if (service === oldServicePrefix) {
        namespace = DEFAULT_NAMESPACE;
      } else if (service.startsWith(oldServicePrefix + '.')) {
        namespace = service.slice(oldServicePrefix.length + 1);
      } else {
        continue; // `com.app.oldx` is not under `com.app.old`
      }
      // The new prefix may itself be under the old one (`com.app` → `com.app.v2`): its own
      // services are not old data. (The old prefix under the new one, `com.app.v1` →
      // `com.app`, is the other way round: every service found is old data.)
      if (newPrefix.startsWith(oldServicePrefix + '.') && (service === newPrefix || service.startsWith(newPrefix + '.'))) continue;
      if (options.namespaces !== undefined && !options.namespaces.includes(namespace)) continue;
      if (SecureStore.namespaceProblem(namespace) !== undefined) {
        report.leftBehind.push(service);
        report.isComplete = false;
        continue;
      }
      let namespaceReport: MigrationReport;
      await SecureStore.run('migrateFrom', NO_KEY, namespace, async () => {
        namespaceReport = provider.migrateService
          ? await provider.migrateService(service, newPrefix, namespace)
          : await SecureStore.migrateThrough(provider, service, SecureStore.service(namespace));
        return 'success';
      });
      const done = namespaceReport!;
      // Defined, not assigned: a namespace named `__proto__` is a key like any other.
      Object.defineProperty(report.namespaces, namespace, { value: done, enumerable: true, writable: true, configurable: true });
      if (done.conflicts.length > 0 || Object.keys(done.skipped).length > 0) report.isComplete = false;
    }
    return report;
  }

  /** The migration steps through a provider's basic operations (for providers without `migrateService`). */
  private static async migrateThrough(provider: SecureStoreProvider, oldService: string, newService: string): Promise<MigrationReport> {
    const report: MigrationReport = { migrated: [], alreadyPresent: [], conflicts: [], skipped: {} };
    for (const key of await provider.getKeys(oldService)) {
      const old = await provider.getItem(oldService, key);
      if (old === null) continue;
      const present = await provider.getItem(newService, key);
      if (present !== null) {
        if (present === old) {
          await provider.removeItem(oldService, key);
          report.alreadyPresent.push(key);
        } else {
          report.conflicts.push(key);
        }
        continue;
      }
      await provider.setItem(newService, key, old);
      if ((await provider.getItem(newService, key)) !== old) {
        throw new SecureStoreError(
          SecureStoreErrorCode.UNKNOWN,
          `The migrated copy of '${key}' did not read back identical; the old item was kept. Run the migration again.`,
          { key },
        );
      }
      await provider.removeItem(oldService, key);
      report.migrated.push(key);
    }
    return report;
  }

  /**
   * Checks the key and namespace, runs `body`, maps its failure and tells the logger.
   * `key` is `NO_KEY` for the operations that take none; for the others, a key missing in a
   * call from plain JavaScript (`undefined`, `null`) is refused as a key, before the value is
   * looked at.
   */
  private static async run(
    operation: string,
    keyArgument: string | typeof NO_KEY,
    ns: string | undefined,
    body: (namespace: string) => Promise<SecureStoreEvent['outcome']>,
  ): Promise<void> {
    const namespace = ns ?? DEFAULT_NAMESPACE;
    const key = typeof keyArgument === 'string' ? keyArgument : undefined;
    try {
      if (typeof namespace !== 'string' || SecureStore.namespaceProblem(namespace) !== undefined) {
        throw new SecureStoreError(
          SecureStoreErrorCode.INVALID_VALUE,
          typeof namespace !== 'string' ? 'A namespace must be a string.' : SecureStore.namespaceProblem(namespace)!,
          { key, namespace: typeof namespace === 'string' ? namespace : undefined },
        );
      }
      if (keyArgument !== NO_KEY && (key === undefined || key.length === 0)) {
        throw new SecureStoreError(
          SecureStoreErrorCode.INVALID_VALUE,
          key === undefined
            ? `A key must be a string; got ${keyArgument === null ? 'null' : typeof keyArgument}.`
            : 'A key must not be empty.',
          { namespace },
        );
      }
      const outcome = await body(namespace);
      SecureStore.logger?.({ operation, namespace, key, outcome });
    } catch (error) {
      const failure = SecureStoreError.fromNative(error, { key, namespace });
      SecureStore.logger?.({ operation, namespace, key, outcome: 'failure', code: failure.code });
      throw failure;
    }
  }

  /** Why a namespace name cannot be used (the Swift store's rule), or undefined. */
  private static namespaceProblem(name: string): string | undefined {
    if (name.length === 0) return 'A namespace name must not be empty.';
    // Control and format characters (Cc, Cf: U+200B, U+FEFF, ...), as the Swift store refuses them.
    if (/[\p{Cc}\p{Cf}]/u.test(name)) return 'A namespace name must not contain control characters.';
    return undefined;
  }

  private static checkPrefix(prefix: unknown, name: string): void {
    if (typeof prefix !== 'string' || prefix.trim().length === 0 || prefix.endsWith('.')) {
      throw new SecureStoreError(
        SecureStoreErrorCode.INVALID_VALUE,
        `The ${name} '${String(prefix)}' is not usable: give a reverse-DNS name without a trailing dot, ` +
          'for example "com.example.app".',
      );
    }
  }

  private static accessibility(accessible: string | undefined): SecureStoreAccessible {
    if (accessible === undefined) return SecureStoreAccessible.AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY;
    if ((Object.values(SecureStoreAccessible) as string[]).includes(accessible)) return accessible as SecureStoreAccessible;
    const fromReactNative = RN_ACCESSIBLE_NAMES[accessible];
    if (fromReactNative !== undefined) return fromReactNative;
    const always = /always/i.test(accessible);
    throw new SecureStoreError(
      SecureStoreErrorCode.INVALID_VALUE,
      always
        ? `The accessibility '${accessible}' is deprecated by Apple and not offered: use ` +
            'SecureStoreAccessible.AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY for data that must be readable in the background.'
        : `The accessibility '${accessible}' is unknown: use a SecureStoreAccessible value (` +
            Object.keys(SecureStoreAccessible).join(', ') +
            ').',
    );
  }
}
