import { InputError } from './errors.js';

/**
 * Input files (specs, datasets, populations, templates, edge lists) are text in UTF-8. Decoding them
 * leniently would replace each invalid byte with U+FFFD, so a question or persona would silently differ from
 * the file: they are decoded strictly, and a byte that is not UTF-8 is bad input naming its offset.
 */

/** Offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629), or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const c = bytes[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    const len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > n) return i;
    for (let k = 1; k < len; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    const c1 = bytes[i + 1];
    // Overlong forms, UTF-16 surrogates, and code points past U+10FFFF.
    if ((c === 0xe0 && c1 < 0xa0) || (c === 0xed && c1 > 0x9f) || (c === 0xf0 && c1 < 0x90) || (c === 0xf4 && c1 > 0x8f)) return i;
    i += len;
  }
  return -1;
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of a file's bytes, decoded strictly (a byte-order mark kept, as Node's 'utf8' keeps it). Invalid
 * UTF-8: one line naming the file, the byte offset and its line, and the fix.
 */
export function decodeUtf8(bytes: Uint8Array, file: string): string {
  try {
    return strict.decode(bytes);
  } catch {
    const at = firstInvalidUtf8(bytes);
    let line = 1;
    for (let i = 0; i < at; i++) if (bytes[i] === 0x0a) line++;
    throw new InputError(
      file,
      `byte ${at} (line ${line})`,
      `0x${bytes[at].toString(16).padStart(2, '0')} is not UTF-8 (the text would be changed on reading)`,
      'save the file as UTF-8',
    );
  }
}
