/**
 * Watch streams in protobuf (`application/vnd.kubernetes.protobuf;stream=watch`),
 * as kube-apiserver's WatchServer writes them: each event is one frame of
 * the length-delimited framer (a 4-byte big-endian length, then the bytes),
 * holding a meta/v1 WatchEvent message encoded without envelope (the raw
 * protobuf stream serializer): {type, object: RawExtension{raw}}, where raw
 * is the event's object as a whole protobuf body (`k8s\0` + runtime.Unknown).
 */
import { decodeKubernetesProtobuf, messageOf, writeEnvelope } from './envelope.js';
import { ProtoDecodeError } from './to-json.js';
import { readFields } from './wire.js';
import { ReverseWriter } from './writer.js';

export const protobufWatchMediaType = 'application/vnd.kubernetes.protobuf;stream=watch';

/** The frame of one watch event; undefined when the object's kind has no message. */
export function encodeWatchEventFrame(type: string, obj: unknown): Buffer | undefined {
  const m = messageOf(obj);
  if (!m) return undefined;
  const w = new ReverseWriter(1024);
  const raw = w.written();
  writeEnvelope(w, m.apiVersion, m.kind, m.type, obj);
  w.uvarint(w.written() - raw);
  w.key(0x0a); // RawExtension.raw
  w.uvarint(w.written() - raw);
  w.key(0x12); // WatchEvent.object
  w.string(type);
  w.key(0x0a); // WatchEvent.type
  w.uint32BE(w.written());
  return w.result();
}

/** Splits a protobuf watch stream into its frames; `rest` is an incomplete tail. */
export function splitFrames(buf: Uint8Array): { frames: Uint8Array[]; rest: Uint8Array } {
  const frames: Uint8Array[] = [];
  let at = 0;
  while (buf.length - at >= 4) {
    const n = ((buf[at]! << 24) | (buf[at + 1]! << 16) | (buf[at + 2]! << 8) | buf[at + 3]!) >>> 0;
    if (buf.length - at - 4 < n) break;
    frames.push(buf.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return { frames, rest: buf.subarray(at) };
}

/** Decodes one frame's WatchEvent: its type and its object as JSON. */
export function decodeWatchEventFrame(frame: Uint8Array): { type: string; object: Record<string, unknown> } {
  let type = '';
  let raw: Uint8Array | undefined;
  for (const f of readFields(frame)) {
    if (f.wt !== 2) continue;
    if (f.no === 1) type = new TextDecoder().decode(f.v);
    else if (f.no === 2) for (const r of readFields(f.v)) if (r.no === 1 && r.wt === 2) raw = r.v;
  }
  if (!raw) throw new ProtoDecodeError('watch event without object');
  return { type, object: decodeKubernetesProtobuf(raw) };
}
