/**
 * Splits a byte stream of concatenated JSON objects (the watch protocol:
 * one event per object, usually newline-separated) into whole objects,
 * whatever the chunk boundaries, including inside multi-byte characters.
 */

export interface JsonStreamDecoder {
  /** Feeds a chunk; returns the complete top-level JSON texts it finished. */
  push(chunk: Uint8Array | string): string[];
  /** True when a partial object is buffered. */
  pending(): boolean;
}

export function newJsonStreamDecoder(): JsonStreamDecoder {
  const utf8 = new TextDecoder('utf-8');
  let buf = '';
  // Scanner state over `buf`, carried between chunks.
  let pos = 0;
  let start = -1;
  let depth = 0;
  /** Index in `buf` of the opening quote of the string being scanned, or -1. */
  let stringAt = -1;
  return {
    push(chunk) {
      buf += typeof chunk === 'string' ? chunk : utf8.decode(chunk, { stream: true });
      const out: string[] = [];
      while (pos < buf.length) {
        if (stringAt >= 0) {
          // Most of an object's text is inside strings: jump from quote to quote (natively), and a quote ends
          // the string unless an odd number of backslashes precedes it.
          const q = buf.indexOf('"', pos);
          if (q < 0) {
            pos = buf.length;
            break;
          }
          let b = q - 1;
          while (b > stringAt && buf.charCodeAt(b) === 0x5c /* \ */) b--;
          pos = q + 1;
          if ((q - 1 - b) % 2 === 0) stringAt = -1;
          continue;
        }
        const c = buf.charCodeAt(pos);
        if (c === 0x22 /* " */) {
          stringAt = pos;
        } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
          if (depth === 0) start = pos;
          depth++;
        } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
          depth--;
          if (depth === 0 && start >= 0) {
            out.push(buf.slice(start, pos + 1));
            start = -1;
          }
        }
        pos++;
      }
      // Drop what has been consumed (keeping an unfinished object, or a string outside one, from its start).
      const keep = start >= 0 ? start : stringAt >= 0 ? stringAt : buf.length;
      buf = buf.slice(keep);
      pos -= keep;
      if (start >= 0) start -= keep;
      if (stringAt >= 0) stringAt -= keep;
      return out;
    },
    pending() {
      return start >= 0 || buf.trim().length > 0;
    },
  };
}
