// The Node-API addon (build/keysmith.node) and its functions, typed. Loaded once, on first use.

/** A store handle from the addon (its access group and accessibility). */
export interface NativeStore {
  readonly __keysmithStore: unique symbol;
}

/** The functions of keysmith.node; every keychain call runs off the JavaScript thread. */
export interface NativeAddon {
  abiVersion: number;
  openStore(accessGroup: string | null, accessibility: string | null): NativeStore;
  set(store: NativeStore, service: string, key: string, value: string): Promise<void>;
  get(store: NativeStore, service: string, key: string): Promise<string | null>;
  contains(store: NativeStore, service: string, key: string): Promise<boolean>;
  remove(store: NativeStore, service: string, key: string): Promise<void>;
  keys(store: NativeStore, service: string): Promise<string[]>;
  removeAll(store: NativeStore, service: string): Promise<void>;
  services(store: NativeStore, prefix: string): Promise<string[]>;
  setBiometricProtected(
    store: NativeStore,
    servicePrefix: string,
    namespace: string,
    key: string,
    value: string,
  ): Promise<{ protected: boolean; reason: string | null }>;
  migrateService(store: NativeStore, servicePrefix: string, namespace: string, oldService: string): Promise<string>;
}

let addon: NativeAddon | undefined;

/**
 * The addon: `KEYSMITH_NODE_ADDON` when set, else `build/keysmith.node` in this package
 * (with libkeysmith.so and the Swift runtime libraries beside it).
 */
export function nativeAddon(): NativeAddon {
  if (addon === undefined) {
    const path = require('path');
    // A relative KEYSMITH_NODE_ADDON is relative to the working directory, as any path a user
    // gives (require alone would take it relative to this file, or for a module name).
    const variable = process.env.KEYSMITH_NODE_ADDON;
    const file: string = variable ? path.resolve(variable) : path.join(__dirname, '..', 'build', 'keysmith.node');
    try {
      addon = require(file) as NativeAddon;
    } catch (error) {
      throw new Error(loadFailure(file, error instanceof Error ? error.message : String(error)));
    }
  }
  return addon;
}

/** The libraries the system provides (not copied beside the addon), as Debian packages. */
const SYSTEM_LIBRARIES: Record<string, string> = { libsodium: 'libsodium23', libsqlite3: 'libsqlite3-0', libkeyutils: 'libkeyutils1' };

/** Why the addon at `file` did not load, and what to do, from the loader's `reason`. */
export function loadFailure(file: string, reason: string): string {
  const cause = reason.split('\n')[0]; // without Node's "Require stack"
  const start = `Keysmith's native addon could not be loaded from ${file} (${cause}). `;
  const library = /([^\s/:]+\.so[.\d]*): cannot open shared object file/.exec(cause)?.[1];
  if (library !== undefined) {
    const system = Object.keys(SYSTEM_LIBRARIES).find((name) => library.startsWith(name + '.'));
    if (system !== undefined) {
      return start + `${library} is a system library: install it (Debian, Ubuntu: apt-get install ${SYSTEM_LIBRARIES[system]}).`;
    }
    const directory = file.slice(0, Math.max(file.lastIndexOf('/'), 0)) || '.';
    return (
      start +
      `The addon needs libkeysmith.so and the Swift runtime libraries in the same directory (${directory}): ` +
      'copy the whole build/ directory that `make node` wrote (or install the package with npm), not keysmith.node alone.'
    );
  }
  return start + 'Build it with `make node` in the Keysmith checkout, or set KEYSMITH_NODE_ADDON to its path.';
}
