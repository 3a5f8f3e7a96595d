/**
 * The codes of a {@link SecureStoreError}: the same strings as the Swift `SecureStore`'s
 * `SecureStoreError.Code`, so logs and dashboards read the same on every platform.
 */
export enum SecureStoreErrorCode {
  /** No such item. `SecureStore.get` reports it as `null`: a normal branch, not a failure. */
  ITEM_NOT_FOUND = 'ITEM_NOT_FOUND',
  /** The user did not pass the item's access control (or biometry is locked out). */
  AUTH_FAILED = 'AUTH_FAILED',
  /** The user canceled the authentication prompt: offer another way, do not retry in a loop. */
  USER_CANCELED = 'USER_CANCELED',
  /** The keychain is locked, or no prompt can be shown (background, simulator): usually transient. */
  INTERACTION_NOT_ALLOWED = 'INTERACTION_NOT_ALLOWED',
  /** The serialized value is longer than the store's size limit (2048 characters by default, and
   *  four UTF-8 bytes per character of the limit). */
  LIMIT_EXCEEDED = 'LIMIT_EXCEEDED',
  /** `null`/`undefined` was stored (call `remove`), a value could not be serialized, or a key,
   *  namespace or option is invalid. */
  INVALID_VALUE = 'INVALID_VALUE',
  /** The stored data is not what was asked for (not text, not the expected JSON). */
  DECODING_FAILED = 'DECODING_FAILED',
  /** The program may not use the configured access group (OSStatus -34018). */
  MISSING_ENTITLEMENT = 'MISSING_ENTITLEMENT',
  /** Anything else; `status` has the native status. */
  UNKNOWN = 'UNKNOWN',
}

/** Native statuses (OSStatus) and the code each means; anything else is UNKNOWN. */
const STATUS_CODES: Record<number, SecureStoreErrorCode> = {
  [-25300]: SecureStoreErrorCode.ITEM_NOT_FOUND, // errSecItemNotFound
  [-25308]: SecureStoreErrorCode.INTERACTION_NOT_ALLOWED, // errSecInteractionNotAllowed
  [-25291]: SecureStoreErrorCode.INTERACTION_NOT_ALLOWED, // errSecNotAvailable
  [-34018]: SecureStoreErrorCode.MISSING_ENTITLEMENT, // errSecMissingEntitlement
  [-128]: SecureStoreErrorCode.USER_CANCELED, // errSecUserCanceled
  [-25293]: SecureStoreErrorCode.AUTH_FAILED, // errSecAuthFailed
  [-50]: SecureStoreErrorCode.INVALID_VALUE, // errSecParam
  [-26275]: SecureStoreErrorCode.DECODING_FAILED, // errSecDecode
};

const CODES = new Set<string>(Object.values(SecureStoreErrorCode));

/**
 * A failure of the secure store: a stable {@link SecureStoreErrorCode}, a message that says
 * what happened and what to do, the key and namespace involved, and the native status
 * (OSStatus) when the keychain reported one. Never contains a stored value.
 *
 * ```ts
 * try {
 *   await SecureStore.set('avatar', hugeObject, 'profile');
 * } catch (e) {
 *   if (e instanceof SecureStoreError && e.code === SecureStoreErrorCode.LIMIT_EXCEEDED) { ... }
 * }
 * ```
 */
export class SecureStoreError extends Error {
  /** What the app should do about it. */
  readonly code: SecureStoreErrorCode;
  /** The native status (OSStatus, for example -25308), when the keychain reported one. */
  readonly status: number | undefined;
  /** The key involved, when there is one (a name, never a value). */
  readonly key: string | undefined;
  /** The namespace involved, when there is one. */
  readonly namespace: string | undefined;

  /**
   * Creates an error.
   * @param code The code.
   * @param message What happened and what to do; never a value.
   * @param details The native status, key and namespace, when known.
   */
  constructor(
    code: SecureStoreErrorCode,
    message: string,
    details: { status?: number; key?: string; namespace?: string } = {},
  ) {
    super(message);
    this.name = 'SecureStoreError';
    this.code = code;
    this.status = details.status;
    this.key = details.key;
    this.namespace = details.namespace;
  }

  /**
   * The error for whatever a provider threw: Keysmith's addon rejects with `code` (a
   * {@link SecureStoreErrorCode} string) and `status` (OSStatus); react-native-keychain
   * rejects with the status as a string `code` on iOS, or a message only.
   * @param error What was thrown.
   * @param context The key and namespace of the call.
   * @returns The error, with the native status kept.
   */
  static fromNative(error: unknown, context: { key?: string; namespace?: string } = {}): SecureStoreError {
    if (error instanceof SecureStoreError) return error;
    const source = (typeof error === 'object' && error !== null ? error : {}) as {
      code?: unknown;
      status?: unknown;
      message?: unknown;
    };
    let status: number | undefined = typeof source.status === 'number' ? source.status : undefined;
    if (status === undefined && typeof source.code === 'string' && /^-?\d+$/.test(source.code)) {
      status = Number(source.code);
    }
    if (status === undefined && typeof source.code === 'number') status = source.code;
    const message =
      typeof source.message === 'string' && source.message.length > 0
        ? source.message
        : `The keychain call failed${status === undefined ? '' : ` (OSStatus ${status})`}.`;
    let code: SecureStoreErrorCode;
    if (typeof source.code === 'string' && CODES.has(source.code)) {
      code = source.code as SecureStoreErrorCode;
    } else if (status !== undefined && STATUS_CODES[status] !== undefined) {
      code = STATUS_CODES[status];
    } else if (/cancel/i.test(message)) {
      code = SecureStoreErrorCode.USER_CANCELED;
    } else if (/authenticat/i.test(message)) {
      code = SecureStoreErrorCode.AUTH_FAILED;
    } else {
      code = SecureStoreErrorCode.UNKNOWN;
    }
    return new SecureStoreError(code, message, { status, ...context });
  }
}
