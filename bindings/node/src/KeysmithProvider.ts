import { nativeAddon, type NativeStore } from './native';
import type { BiometricProtection, MigrationReport, SecureStoreProvider } from './SecureStoreProvider';

/**
 * The default provider: Keysmith's keychain, in process, through its C interface. Items are
 * generic passwords (service, account = key) in the keychain named by `KEYSMITH_HOME`
 * (else `~/.local/share/keysmith`): the same items the Swift `SecureStore` and the
 * `keysmith` tool see.
 *
 * Every call runs on libuv's thread pool and never blocks the event loop.
 */
export class KeysmithProvider implements SecureStoreProvider {
  /** `keysmith`. */
  readonly name = 'keysmith';
  private readonly store: NativeStore;

  /**
   * Opens the provider.
   * @param options The accessibility name (a `SecureStoreAccessible` value) and the access
   *   group of the items written; both optional.
   */
  constructor(options: { accessibility?: string; accessGroup?: string } = {}) {
    this.store = nativeAddon().openStore(options.accessGroup ?? null, options.accessibility ?? null);
  }

  setItem(service: string, key: string, value: string): Promise<void> {
    return nativeAddon().set(this.store, service, key, value);
  }

  getItem(service: string, key: string): Promise<string | null> {
    return nativeAddon().get(this.store, service, key);
  }

  removeItem(service: string, key: string): Promise<void> {
    return nativeAddon().remove(this.store, service, key);
  }

  containsItem(service: string, key: string): Promise<boolean> {
    return nativeAddon().contains(this.store, service, key);
  }

  getKeys(service: string): Promise<string[]> {
    return nativeAddon().keys(this.store, service);
  }

  removeAll(service: string): Promise<void> {
    return nativeAddon().removeAll(this.store, service);
  }

  getServices(prefix: string): Promise<string[]> {
    return nativeAddon().services(this.store, prefix);
  }

  setBiometricProtectedItem(servicePrefix: string, namespace: string, key: string, value: string): Promise<BiometricProtection> {
    return nativeAddon().setBiometricProtected(this.store, servicePrefix, namespace, key, value);
  }

  async migrateService(oldService: string, servicePrefix: string, namespace: string): Promise<MigrationReport> {
    const json = await nativeAddon().migrateService(this.store, servicePrefix, namespace, oldService);
    return JSON.parse(json) as MigrationReport;
  }
}
