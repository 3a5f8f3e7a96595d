import type { SecureStoreProvider } from './SecureStoreProvider';

/**
 * When an item can be read (the keychain's accessibility, `kSecAttrAccessible`). The values
 * are the Swift `Accessibility` names, so items written from Node and from Swift agree.
 *
 * | Use | Accessibility |
 * |---|---|
 * | access token | `WHEN_UNLOCKED_THIS_DEVICE_ONLY` (no background reads; never leaves the device) |
 * | refresh token | `AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY` (background refresh can read it) |
 * | payment PIN | `WHEN_UNLOCKED_THIS_DEVICE_ONLY` with `setBiometricProtected` |
 * | device identifier | `AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY` (the "always" classes are deprecated) |
 */
export enum SecureStoreAccessible {
  /** Readable while unlocked; may migrate through backups. */
  WHEN_UNLOCKED = 'whenUnlocked',
  /** Readable while unlocked; never leaves this device. */
  WHEN_UNLOCKED_THIS_DEVICE_ONLY = 'whenUnlockedThisDeviceOnly',
  /** Readable after the first unlock until restart; may migrate through backups. */
  AFTER_FIRST_UNLOCK = 'afterFirstUnlock',
  /** Readable after the first unlock until restart; never leaves this device. The default. */
  AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY = 'afterFirstUnlockThisDeviceOnly',
  /** Readable while unlocked and only while a passcode is set; never leaves this device. */
  WHEN_PASSCODE_SET_THIS_DEVICE_ONLY = 'whenPasscodeSetThisDeviceOnly',
}

/** One step of the store, as the logging hook sees it: names and outcomes, never values. */
export interface SecureStoreEvent {
  /** `set`, `get`, `remove`, `contains`, `resetNamespace`, `getKeys`, `setBiometricProtected` or `migrateFrom`. */
  operation: string;
  /** The namespace. */
  namespace: string;
  /** The key, when the operation has one. */
  key?: string;
  /** `success`, `notFound` (a missing item: a normal branch, not an error), `fellBack`, or `failure`. */
  outcome: 'success' | 'notFound' | 'fellBack' | 'failure';
  /** The error code when the outcome is `failure`. */
  code?: string;
}

/** The settings of `SecureStore.configure`. */
export interface SecureStoreOptions {
  /** The prefix of every service, reverse-DNS (default `com.app.securestore`): a namespace
   *  `auth` is the keychain service `<servicePrefix>.auth`. */
  servicePrefix?: string;
  /** The accessibility of the items written (default `AFTER_FIRST_UNLOCK_THIS_DEVICE_ONLY`).
   *  react-native-keychain's `ACCESSIBLE` values (`AccessibleWhenUnlocked`, …) are accepted too. */
  accessible?: SecureStoreAccessible | string;
  /** The access group shared with other programs, or none for this program's default group
   *  (`keysmith.shared` for a program that configures no groups, as the keysmith tool). */
  accessGroup?: string;
  /** The largest serialized value, in characters (default 2048); its UTF-8 bytes are bounded
   *  too, at four per character of the limit (8192 by default). */
  sizeLimit?: number;
  /** The provider layer (default: a {@link KeysmithProvider} with `accessible` and `accessGroup`). */
  provider?: SecureStoreProvider;
  /** A logging hook: receives names and outcomes, never values. */
  logger?: (event: SecureStoreEvent) => void;
}
