import { SecureStoreError, SecureStoreErrorCode } from './SecureStoreError';

/**
 * The serialization rules of {@link SecureStore}, the same as the Swift store's:
 *
 * - `null` and `undefined` are rejected (call `remove` to delete); so is anything JSON
 *   cannot represent (a function, a symbol, a BigInt, a cycle) or that serializes to `null`
 *   (`NaN`).
 * - A string is stored raw, as its UTF-8 bytes, never JSON-quoted: values written as plain
 *   strings by other programs (or older code) read back unchanged.
 * - Anything else is stored as JSON.
 * - The serialized text may not be longer than the size limit, in characters (user-perceived
 *   characters, as Swift counts them: an emoji is one), nor than four UTF-8 bytes per
 *   character of the limit (text of any script fits; one "character" of many combining marks
 *   counts its bytes), as the Swift store rules.
 * - A string with an unpaired surrogate is rejected: its UTF-8 form would not be the same text.
 * - Reading parses JSON, and returns the raw text when it is not JSON, is `null` (which only
 *   a string stored raw can be), or is a number that does not read back as the same text
 *   (`12345678901234567890` would lose digits).
 */
export const ValueCoding = {
  /** The text to store for `value`. */
  serialize(value: unknown, key: string, namespace: string, sizeLimit: number): string {
    if (value === null || value === undefined) {
      throw new SecureStoreError(
        SecureStoreErrorCode.INVALID_VALUE,
        `Cannot store ${value === null ? 'null' : 'undefined'} for '${key}'. ` +
          `To delete the value, call SecureStore.remove('${key}', '${namespace}').`,
        { key, namespace },
      );
    }
    let text: string | undefined;
    if (typeof value === 'string') {
      if (!isWellFormed(value)) {
        throw new SecureStoreError(
          SecureStoreErrorCode.INVALID_VALUE,
          `The string for '${key}' contains an unpaired surrogate (half of a UTF-16 pair), which UTF-8 ` +
            'cannot carry: it would be stored changed. Store the text whole, or encode it (base64).',
          { key, namespace },
        );
      }
      text = value;
    } else {
      try {
        text = JSON.stringify(value, function (this: Record<string, unknown>, name: string, member: unknown) {
          // `this[name]` is the member before its toJSON (a Buffer's is a plain object).
          const problem = lossyProblem(this[name]) ?? lossyProblem(member);
          if (problem !== undefined) throw new SecureStoreError(SecureStoreErrorCode.INVALID_VALUE, `The value for '${key}' ${problem}`, { key, namespace });
          return member;
        });
      } catch (error) {
        if (error instanceof SecureStoreError) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new SecureStoreError(
          SecureStoreErrorCode.INVALID_VALUE,
          `A value of type ${typeof value} for '${key}' could not be serialized as JSON (${reason}).`,
          { key, namespace },
        );
      }
      if (text === undefined || text === 'null') {
        throw new SecureStoreError(
          SecureStoreErrorCode.INVALID_VALUE,
          `A value of type ${typeof value} for '${key}' has no JSON form (it serializes to ${text ?? 'nothing'}): ` +
            'store a string, number, boolean, array or plain object.',
          { key, namespace },
        );
      }
    }
    // Bytes first: counting the characters of a huge text is the expensive part.
    const bytes = utf8Length(text);
    const byteLimit = sizeLimit * BYTES_PER_CHARACTER;
    if (bytes > byteLimit) {
      throw new SecureStoreError(
        SecureStoreErrorCode.LIMIT_EXCEEDED,
        `The value for '${key}' is ${bytes} bytes of UTF-8 once serialized; the limit is ${sizeLimit} characters ` +
          `and ${byteLimit} bytes (4 per character, so a character of many combining marks counts its bytes). ` +
          'Store large data elsewhere (an encrypted file with its key here), split it, or raise the ' +
          'sizeLimit option of SecureStore.configure.',
        { key, namespace },
      );
    }
    // Characters are never more than UTF-16 units, so only a long text needs counting.
    if (text.length > sizeLimit) {
      const size = characterCount(text);
      if (size > sizeLimit) {
        throw new SecureStoreError(
          SecureStoreErrorCode.LIMIT_EXCEEDED,
          `The value for '${key}' is ${size} characters once serialized; the limit is ${sizeLimit}. ` +
            'Store large data elsewhere (an encrypted file with its key here), split it, or raise the ' +
            'sizeLimit option of SecureStore.configure.',
          { key, namespace },
        );
      }
    }
    return text;
  },

  /** The value stored as `text`: its JSON value, or the text itself when it is not JSON. */
  deserialize<T>(text: string): T {
    // Most stored strings (tokens) cannot be JSON: skip the parser's exception for them.
    if (!/^[\s]*[[{"\-0-9tfn]/.test(text)) return text as unknown as T;
    try {
      const parsed: unknown = JSON.parse(text);
      // Nothing is stored as JSON null (null is refused), so the text `null` is a string that
      // was stored raw; read as null it would look like a missing value.
      if (parsed === null) return text as unknown as T;
      // A number whose JSON form is not the stored text was not stored as a number (JSON.stringify
      // writes the exact form back): it is a string such as an account number of 20 digits,
      // which as a number would lose digits.
      if (typeof parsed === 'number' && JSON.stringify(parsed) !== text) return text as unknown as T;
      return parsed as T;
    } catch {
      return text as unknown as T;
    }
  },
};

/**
 * Why a value (or a member of one) would be stored as something else than it is: JSON turns
 * a Promise, a Map or a Set into `{}`. Undefined when JSON carries it.
 */
function lossyProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (typeof (value as { then?: unknown }).then === 'function') {
    return 'is a Promise (or another thenable), which would be stored as {}: await it, then store the result.';
  }
  if (value instanceof Map || value instanceof WeakMap) {
    return 'contains a Map, which JSON stores as {}: convert it first (Object.fromEntries(map)).';
  }
  if (value instanceof Set || value instanceof WeakSet) {
    return 'contains a Set, which JSON stores as {}: convert it first ([...set]).';
  }
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
    return 'contains bytes (a Buffer, typed array or ArrayBuffer), which JSON stores as an object of numbers: ' +
      "store them as text, for example Buffer.from(bytes).toString('base64').";
  }
  return undefined;
}

/** The UTF-8 bytes allowed per character of the size limit (the longest single code point). */
const BYTES_PER_CHARACTER = 4;

/** The number of UTF-8 bytes of a well-formed string. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4; // a surrogate pair: one code point of four bytes
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Whether a string has no unpaired surrogate (so that its UTF-8 form is exact). */
function isWellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?:[^\ud800-\udbff]|^)[\udc00-\udfff]/.test(text);
}

/** The number of user-perceived characters (grapheme clusters), as Swift's `String.count`. */
function characterCount(text: string): number {
  const Segmenter = (Intl as unknown as { Segmenter?: new (locale?: string, options?: object) => { segment(text: string): Iterable<unknown> } }).Segmenter;
  if (Segmenter === undefined) return [...text].length;
  let count = 0;
  for (const _ of new Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) count++;
  return count;
}
