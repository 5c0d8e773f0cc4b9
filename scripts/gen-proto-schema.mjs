#!/usr/bin/env node
/**
 * Writes data/proto/schema.json.gz: the protobuf schema of every built-in
 * Kubernetes kind, as compact data for src/apiserver/protobuf.
 *
 * Source: a kubectl binary (a Go program built from the Kubernetes sources).
 * It carries (1) every `generated.proto` as a gzipped FileDescriptorProto
 * (field numbers, types, maps) and (2) Go's reflection data of the API
 * structs, whose field tags (`json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`)
 * and field kinds tell what protobuf alone does not: the JSON name, inlined
 * fields (`json:",inline"`), whether a field is a Go pointer (a zero value
 * on the wire is then meaningful and kept), and wrappers of Go slices.
 *
 *   node scripts/gen-proto-schema.mjs [path/to/kubectl] [out.json.gz]
 *
 * Needs a non-PIE linux/amd64 Go binary (the release kubectl is one).
 *
 * Output: { v: 1, source, messages: { "<full.name>": [[number, jsonName, type, flags], ...] } }
 *   type: a scalar name ("string", "int64", ...), a message name, or
 *         ["map", keyType, valueType];
 *   flags: 1 repeated, 2 Go pointer (keep zero values), 4 inlined in the
 *          parent's JSON, 8 Go slice wrapped in a message (JSON = its items).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync, inflateRawSync, constants } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kubectl = realpathSync(process.argv[2] ?? execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim());
const outFile = process.argv[3] ?? join(root, 'data', 'proto', 'schema.json.gz');
const bin = readFileSync(kubectl);
const version = (() => {
  try {
    return JSON.parse(execFileSync(kubectl, ['version', '--client', '-o', 'json']).toString()).clientVersion.gitVersion;
  } catch {
    return 'unknown';
  }
})();

// ---- minimal protobuf reader (descriptors only) ----
function* fieldsOf(buf) {
  let i = 0;
  const varint = () => {
    let v = 0n, s = 0n;
    for (;;) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << s;
      if (b < 0x80) return v;
      s += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >>> 3, wt = key & 7;
    if (wt === 0) yield [no, varint()];
    else if (wt === 2) { const n = Number(varint()); yield [no, buf.subarray(i, i + n)]; i += n; }
    else if (wt === 1) { yield [no, buf.subarray(i, i + 8)]; i += 8; }
    else if (wt === 5) { yield [no, buf.subarray(i, i + 4)]; i += 4; }
    else throw new Error(`wire type ${wt}`);
  }
}
const str = (b) => Buffer.from(b).toString('utf8');

const scalarOf = { 1: 'double', 2: 'float', 3: 'int64', 4: 'uint64', 5: 'int32', 6: 'fixed64', 7: 'fixed32', 8: 'bool', 9: 'string', 12: 'bytes', 13: 'uint32', 14: 'enum', 15: 'sfixed32', 16: 'sfixed64', 17: 'sint32', 18: 'sint64' };

/** full name -> { fields: [{name, number, label, type, typeName}], mapEntry } */
const messages = new Map();
function readMessage(buf, prefix) {
  const m = { fields: [], mapEntry: false };
  let name = '';
  const nested = [];
  for (const [no, v] of fieldsOf(buf)) {
    if (no === 1) name = str(v);
    else if (no === 2) {
      const f = {};
      for (const [fno, fv] of fieldsOf(v)) {
        if (fno === 1) f.name = str(fv);
        else if (fno === 3) f.number = Number(fv);
        else if (fno === 4) f.label = Number(fv);
        else if (fno === 5) f.type = Number(fv);
        else if (fno === 6) f.typeName = str(fv).replace(/^\./, '');
      }
      m.fields.push(f);
    } else if (no === 3) nested.push(v);
    else if (no === 7) for (const [ono, ov] of fieldsOf(v)) if (ono === 7 && ov === 1n) m.mapEntry = true;
  }
  const full = `${prefix}.${name}`;
  messages.set(full, m);
  for (const n of nested) readMessage(n, full);
}

/** RFC 1952 header length of the gzip member at i (FEXTRA, FNAME, FCOMMENT, FHCRC). */
function gzipHeaderLength(i) {
  const flags = bin[i + 3];
  let n = 10;
  if (flags & 4) n += 2 + bin.readUInt16LE(i + n);
  if (flags & 8) n = bin.indexOf(0, i + n) - i + 1;
  if (flags & 16) n = bin.indexOf(0, i + n) - i + 1;
  if (flags & 2) n += 2;
  return n;
}

let files = 0;
for (let i = bin.indexOf(Buffer.from([0x1f, 0x8b, 8])); i >= 0; i = bin.indexOf(Buffer.from([0x1f, 0x8b, 8]), i + 1)) {
  // Inflate this gzip member only: gunzip would run on into a member that follows at once
  // (the descriptors of certificates/v1 and v1beta1 are adjacent) and merge the two files.
  let out;
  try {
    out = inflateRawSync(bin.subarray(i + gzipHeaderLength(i), Math.min(bin.length, i + (1 << 20))), { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    continue;
  }
  if (out[0] !== 0x0a || !/^k8s\.io\/.*generated\.proto$/.test(str(out.subarray(2, 2 + out[1])))) continue;
  let pkg = '';
  const msgs = [];
  for (const [no, v] of fieldsOf(out)) {
    if (no === 2) pkg = str(v);
    else if (no === 4) msgs.push(v);
  }
  for (const m of msgs) readMessage(m, pkg);
  files++;
}
if (files === 0) throw new Error(`${kubectl}: no Kubernetes FileDescriptorProto found`);

// ---- Go reflection data: struct types and their field tags ----
function elfSection(name) {
  const shoff = Number(bin.readBigUInt64LE(0x28));
  const shentsize = bin.readUInt16LE(0x3a), shnum = bin.readUInt16LE(0x3c), shstrndx = bin.readUInt16LE(0x3e);
  const sh = (k) => shoff + k * shentsize;
  const strOff = Number(bin.readBigUInt64LE(sh(shstrndx) + 0x18));
  for (let k = 0; k < shnum; k++) {
    const nm = bin.subarray(strOff + bin.readUInt32LE(sh(k)), strOff + bin.readUInt32LE(sh(k)) + 32).toString('latin1').split('\0')[0];
    if (nm === name) return { addr: Number(bin.readBigUInt64LE(sh(k) + 0x10)), off: Number(bin.readBigUInt64LE(sh(k) + 0x18)), size: Number(bin.readBigUInt64LE(sh(k) + 0x20)) };
  }
  throw new Error(`no ${name} section`);
}
const ro = elfSection('.rodata');
const inRo = (va) => va >= ro.addr && va < ro.addr + ro.size;
const fileOf = (va) => va - ro.addr + ro.off;
const u64 = (va) => Number(bin.readBigUInt64LE(fileOf(va)));
function goName(va) {
  let p = fileOf(va);
  const flags = bin[p++];
  const rd = () => { let v = 0, s = 0; for (;;) { const b = bin[p++]; v |= (b & 0x7f) << s; if (b < 0x80) return v; s += 7; } };
  const n = rd();
  const name = bin.toString('latin1', p, p + n);
  p += n;
  let tag = '';
  if (flags & 2) { const t = rd(); tag = bin.toString('latin1', p, p + t); }
  return { name, tag, embedded: (flags & 8) !== 0 };
}
const KIND_PTR = 22, KIND_SLICE = 23, KIND_STRUCT = 25;
/** key "number:protoName,..." -> list of field infos from Go structs with that exact field set */
const structsByKey = new Map();
for (let va = ro.addr; va + 80 <= ro.addr + ro.size; va += 8) {
  const kind = bin[fileOf(va) + 23] & 0x1f;
  if (kind !== KIND_STRUCT) continue;
  const fp = u64(va + 56), len = u64(va + 64), cap = u64(va + 72);
  if (len !== cap || len === 0 || len > 200 || !inRo(fp) || !inRo(u64(va + 48) || ro.addr)) continue;
  const fields = [];
  let ok = true;
  for (let k = 0; k < len && ok; k++) {
    const nameVa = u64(fp + k * 24), typVa = u64(fp + k * 24 + 8);
    if (!inRo(nameVa) || !inRo(typVa)) { ok = false; break; }
    const n = goName(nameVa);
    const m = /protobuf:"(\w+),(\d+)(?:,(?:opt|req|rep|casttype=[^,"]*|castkey=[^,"]*|castvalue=[^,"]*|customtype=[^,"]*))*(?:,name=(\w+))?/.exec(n.tag);
    if (!m) continue;
    const json = /json:"([^",]*)((?:,[^"]*)?)"/.exec(n.tag);
    fields.push({
      number: Number(m[2]),
      protoName: m[3] ?? null, // absent for an embedded struct: `protobuf:"bytes,1,req"`
      json: json ? json[1] : m[3],
      inline: json ? json[1] === '' && /inline/.test(json[2]) : false,
      kind: bin[fileOf(typVa) + 23] & 0x1f,
    });
  }
  if (!ok || fields.length === 0) continue;
  const key = fields.map((f) => f.number).sort((a, b) => a - b).join(',');
  // A named type has an uncommonType after the structType (48 + 8 + 24 bytes): its PkgPath nameOff.
  fields.pkgPath = bin[fileOf(va) + 20] & 1 ? goName(ro.addr + bin.readInt32LE(fileOf(va) + 80)).name : '';
  fields.typeName = goName(ro.addr + bin.readInt32LE(fileOf(va) + 40)).name.replace(/^\*/, '');
  let list = structsByKey.get(key);
  if (!list) structsByKey.set(key, (list = []));
  list.push(fields);
}

// ---- join ----
const DEBUG = process.env.GEN_DEBUG;
const out = {};
let matched = 0, unmatched = 0;
const unmatchedNames = [];
const conflicts = [];
for (const [full, m] of messages) {
  if (m.mapEntry) continue;
  const key = m.fields.map((f) => f.number).sort((a, b) => a - b).join(',');
  // Same field set in several Go structs (ReplicaSetSpec and ReplicationControllerSpec):
  // prefer those of the same type name (`v1.ReplicaSetSpec`).
  const short = full.slice(full.lastIndexOf('.') + 1);
  const all = (structsByKey.get(key) ?? []).filter((s) => s.every((g) => g.protoName === null || m.fields.some((f) => f.number === g.number && f.name === g.protoName)));
  const named = all.filter((s) => s.typeName.endsWith(`.${short}`));
  const samePkg = named.filter((s) => full.startsWith(s.pkgPath.replace(/\//g, '.') + '.'));
  const goStructs = samePkg.length ? samePkg : named;
  if (m.fields.length > 0) goStructs.length ? matched++ : (unmatched++, unmatchedNames.push(full));
  out[full] = m.fields.map((f) => {
    const go = goStructs.map((s) => s.find((g) => g.number === f.number));
    const g = go[0];
    if (go.some((x) => x.kind !== g.kind || x.json !== g.json || x.inline !== g.inline)) {
      conflicts.push(`${full}.${f.name}`);
      if (DEBUG) console.log(full, f.name, goStructs.map((s) => `${s.pkgPath} ${s.typeName}`), go);
    }
    let type;
    if (f.type === 11) {
      const entry = messages.get(f.typeName);
      if (entry?.mapEntry) {
        const kf = entry.fields.find((x) => x.number === 1), vf = entry.fields.find((x) => x.number === 2);
        type = ['map', scalarOf[kf.type], vf.type === 11 ? vf.typeName : scalarOf[vf.type]];
      } else type = f.typeName;
    } else type = scalarOf[f.type];
    let flags = 0;
    if (f.label === 3 && !Array.isArray(type)) flags |= 1;
    if (g?.kind === KIND_PTR) flags |= 2;
    if (g?.inline) flags |= 4;
    if (g?.kind === KIND_SLICE && f.label !== 3 && f.type === 11) flags |= 8;
    return [f.number, g ? g.json || f.name : f.name, type, flags];
  });
}
mkdirSync(dirname(outFile), { recursive: true });
const json = JSON.stringify({ v: 1, source: `kubectl ${version}`, messages: out });
writeFileSync(outFile, gzipSync(json, { level: 9 }));
console.log(`${files} proto files, ${Object.keys(out).length} messages (${matched} matched to Go structs, ${unmatched} not), ${unmatchedNames.join(' ')}; ${conflicts.length} conflicts${conflicts.length ? ': ' + conflicts.slice(0, 20).join(' ') : ''}; wrote ${outFile} (${gzipSync(json, { level: 9 }).length} bytes)`);
