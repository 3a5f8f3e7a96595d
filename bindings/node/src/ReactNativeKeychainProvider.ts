import type { BiometricProtection, SecureStoreProvider } from './SecureStoreProvider';
import { SecureStoreAccessible } from './SecureStoreOptions';

// The part of react-native-keychain's published API (version 8 and later) this adapter uses,
// declared here so this package compiles without React Native. Pass the module itself:
// `new ReactNativeKeychainProvider(require('react-native-keychain'))`.

/** react-native-keychain's options of `setGenericPassword`. */
export interface ReactNativeKeychainSetOptions {
  service?: string;
  accessible?: string;
  accessGroup?: string;
  accessControl?: string;
}

/** react-native-keychain's options of `getGenericPassword` and friends. */
export interface ReactNativeKeychainGetOptions {
  service?: string;
  accessGroup?: string;
  authenticationPrompt?: { title?: string; subtitle?: string; description?: string; cancel?: string };
}

/** What `getGenericPassword` resolves to when an entry exists. */
export interface ReactNativeKeychainCredentials {
  username: string;
  password: string;
  service: string;
  storage: string;
}

/** The functions and constants of `react-native-keychain` this adapter calls. */
export interface ReactNativeKeychainModule {
  setGenericPassword(
    username: string,
    password: string,
    options?: ReactNativeKeychainSetOptions,
  ): Promise<false | { service: string; storage: string }>;
  getGenericPassword(options?: ReactNativeKeychainGetOptions): Promise<false | ReactNativeKeychainCredentials>;
  hasGenericPassword(options?: ReactNativeKeychainGetOptions): Promise<boolean>;
  resetGenericPassword(options?: ReactNativeKeychainGetOptions): Promise<boolean>;
  getAllGenericPasswordServices(): Promise<string[]>;
  getSupportedBiometryType(): Promise<string | null>;
  readonly ACCESS_CONTROL: { readonly BIOMETRY_CURRENT_SET: string };
}

/** react-native-keychain's `ACCESSIBLE` values for each {@link SecureStoreAccessible}. */
const RN_ACCESSIBLE: Record<SecureStoreAccessible, string> = {
  [SecureStoreAccessible.WHEN_UNLOCKED]: 'AccessibleWhenUnlocked',
  [SecureStoreAccessible.WHEN_UNLOCKED_THIS_DEVICE_ONLY]: 'AccessibleWhenUnlockedThisDeviceOnly',
  [SecureStoreAccessible.AFTER_FIRST_UNLOCK]: 'AccessibleAfterFirstUnlock',
  [SecureStoreAccessible.AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY]: 'AccessibleAfterFirstUnlockThisDeviceOnly',
  [SecureStoreAccessible.WHEN_PASSCODE_SET_THIS_DEVICE_ONLY]: 'AccessibleWhenPasscodeSetThisDeviceOnly',
};

/** Between a service and a key in react-native-keychain's service name; namespaces cannot
 *  contain control characters, so two (service, key) pairs never share a name. */
const SEPARATOR = '\u001f';

/**
 * The provider for a React Native app: react-native-keychain as the native base (iOS
 * Keychain, Android Keystore), under the same `SecureStore` API, so business code is the
 * same in the app and in its Node or Electron companions.
 *
 * react-native-keychain keeps one credential per service, so each (service, key) pair is the
 * service `<service>\u001f<key>` with the key as its user name. Biometric protection asks
 * `getSupportedBiometryType()` first and uses `ACCESS_CONTROL.BIOMETRY_CURRENT_SET` only when
 * biometry exists (on a simulator it does not, and the value is stored plainly, with the
 * reason). This adapter is typed against react-native-keychain's published API; it is not
 * run by this package's tests (there is no React Native runtime here).
 */
export class ReactNativeKeychainProvider implements SecureStoreProvider {
  /** `react-native-keychain`. */
  readonly name = 'react-native-keychain';

  /**
   * Creates the adapter.
   * @param keychain The `react-native-keychain` module.
   * @param options The accessibility (default `AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY`) and access group.
   */
  constructor(
    private readonly keychain: ReactNativeKeychainModule,
    private readonly options: { accessible?: SecureStoreAccessible; accessGroup?: string } = {},
  ) {}

  private itemService(service: string, key: string): string {
    return `${service}${SEPARATOR}${key}`;
  }

  private get accessible(): string {
    return RN_ACCESSIBLE[this.options.accessible ?? SecureStoreAccessible.AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY];
  }

  async setItem(service: string, key: string, value: string): Promise<void> {
    const result = await this.keychain.setGenericPassword(key, value, {
      service: this.itemService(service, key),
      accessible: this.accessible,
      accessGroup: this.options.accessGroup,
    });
    if (result === false) throw new Error('react-native-keychain did not store the value.');
  }

  async getItem(service: string, key: string): Promise<string | null> {
    const credentials = await this.keychain.getGenericPassword({
      service: this.itemService(service, key),
      accessGroup: this.options.accessGroup,
    });
    return credentials === false ? null : credentials.password;
  }

  async removeItem(service: string, key: string): Promise<void> {
    await this.keychain.resetGenericPassword({ service: this.itemService(service, key), accessGroup: this.options.accessGroup });
  }

  containsItem(service: string, key: string): Promise<boolean> {
    return this.keychain.hasGenericPassword({ service: this.itemService(service, key), accessGroup: this.options.accessGroup });
  }

  async getKeys(service: string): Promise<string[]> {
    const start = service + SEPARATOR;
    const all = await this.keychain.getAllGenericPasswordServices();
    return all.filter((name) => name.startsWith(start)).map((name) => name.slice(start.length)).sort();
  }

  async removeAll(service: string): Promise<void> {
    for (const key of await this.getKeys(service)) await this.removeItem(service, key);
  }

  async getServices(prefix: string): Promise<string[]> {
    const all = await this.keychain.getAllGenericPasswordServices();
    const services = new Set(all.filter((name) => name.includes(SEPARATOR)).map((name) => name.split(SEPARATOR)[0]));
    return [...services].filter((service) => service.startsWith(prefix)).sort();
  }

  async setBiometricProtectedItem(servicePrefix: string, namespace: string, key: string, value: string): Promise<BiometricProtection> {
    const service = this.itemService(`${servicePrefix}.${namespace}`, key);
    const biometry = await this.keychain.getSupportedBiometryType();
    if (biometry === null) {
      // An update would keep the access control of an earlier protected item: remove it first.
      await this.keychain.resetGenericPassword({ service, accessGroup: this.options.accessGroup });
      await this.setItem(`${servicePrefix}.${namespace}`, key, value);
      return { protected: false, reason: 'no biometry is available on this device (or simulator)' };
    }
    const result = await this.keychain.setGenericPassword(key, value, {
      service,
      accessible: RN_ACCESSIBLE[SecureStoreAccessible.WHEN_UNLOCKED_THIS_DEVICE_ONLY],
      accessControl: this.keychain.ACCESS_CONTROL.BIOMETRY_CURRENT_SET,
      accessGroup: this.options.accessGroup,
    });
    if (result === false) throw new Error('react-native-keychain did not store the value.');
    return { protected: true, reason: null };
  }
}
