/**
 * A compact image of an MVCC key index (keys and revisions, no values): what
 * the sqlite backend stores beside its revision log so that opening a large
 * database reads one row instead of scanning one row per revision.
 *
 * `keys` is every key once, in key order, joined by '\n' (a key containing
 * '\n' cannot be imaged); `numbers` holds, per key in the same order, the
 * entry count and then (revision, createRevision, version, deleted 0/1) per
 * entry, oldest first, as float64 (revisions are integers below 2^53). The
 * decoded index keeps those numbers and unpacks a key's entries on first use.
 */
import { newPackedMvccIndex, type MvccIndex } from './mvcc-index.js';

export interface IndexImage {
  keys: string;
  numbers: Buffer;
  /** Entries over all keys (a check on decoding). */
  entries: number;
}

/** The image of `index`, or undefined when a key cannot be imaged. */
export function encodeIndexImage(index: MvccIndex<null>): IndexImage | undefined {
  const keys: string[] = [];
  const numbers = new Float64Array(index.size + 4 * index.entries);
  let n = 0;
  let bad = false;
  index.forEachKey((key, list) => {
    if (key.includes('\n')) bad = true;
    keys.push(key);
    numbers[n++] = list.length;
    for (const e of list) {
      numbers[n++] = e.revision;
      numbers[n++] = e.createRevision;
      numbers[n++] = e.version;
      numbers[n++] = e.deleted ? 1 : 0;
    }
  });
  if (bad) return undefined;
  return { keys: keys.join('\n'), numbers: Buffer.from(numbers.buffer, numbers.byteOffset, numbers.byteLength), entries: index.entries };
}

export interface DecodedIndexImage {
  index: MvccIndex<null>;
  /** Lowest and highest revision of any entry (0 when empty). */
  first: number;
  last: number;
}

/**
 * The index an image describes, its entries left packed in the image's
 * numbers until used (newPackedMvccIndex); throws when the image is
 * malformed (keys out of order, counts or revisions that do not add up).
 */
export function decodeIndexImage(image: IndexImage): DecodedIndexImage {
  if (image.numbers.byteLength % 8 !== 0) throw new Error('index image: numbers are not float64s');
  // copy: a Buffer from SQLite need not be 8-byte aligned
  const numbers = new Float64Array(new Uint8Array(image.numbers).buffer);
  const keys = image.keys === '' ? [] : image.keys.split('\n');
  const offsets: number[] = new Array(keys.length);
  let n = 0;
  let entries = 0;
  let first = Infinity;
  let last = 0;
  for (let k = 0; k < keys.length; k++) {
    if (k > 0 && !(keys[k - 1]! < keys[k]!)) throw new Error(`index image: keys out of order at ${keys[k]}`);
    offsets[k] = n;
    const count = numbers[n]!;
    if (!(count >= 1) || n + 1 + 4 * count > numbers.length) throw new Error(`index image: bad entry count for ${keys[k]}`);
    let prev = 0;
    for (let i = 0, o = n + 1; i < count; i++, o += 4) {
      const rev = numbers[o]!;
      if (!(rev > prev)) throw new Error(`index image: revisions of ${keys[k]} not ascending`);
      prev = rev;
    }
    if (numbers[n + 1]! < first) first = numbers[n + 1]!;
    if (prev > last) last = prev;
    entries += count;
    n += 1 + 4 * count;
  }
  if (n !== numbers.length || entries !== image.entries) throw new Error('index image: sizes do not match');
  return { index: newPackedMvccIndex(keys, offsets, numbers, entries), first: entries > 0 ? first : 0, last };
}
