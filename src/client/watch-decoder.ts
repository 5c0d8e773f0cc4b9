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
  let inString = false;
  let escaped = false;
  return {
    push(chunk) {
      buf += typeof chunk === 'string' ? chunk : utf8.decode(chunk, { stream: true });
      const out: string[] = [];
      for (; pos < buf.length; pos++) {
        const c = buf.charCodeAt(pos);
        if (inString) {
          if (escaped) escaped = false;
          else if (c === 0x5c /* \ */) escaped = true;
          else if (c === 0x22 /* " */) inString = false;
          continue;
        }
        if (c === 0x22) {
          inString = true;
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
      }
      // Drop what has been consumed.
      const keep = start >= 0 ? start : buf.length;
      buf = buf.slice(keep);
      pos -= keep;
      if (start >= 0) start = 0;
      return out;
    },
    pending() {
      return start >= 0 || buf.trim().length > 0;
    },
  };
}
