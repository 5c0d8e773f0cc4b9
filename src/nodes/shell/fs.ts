/**
 * An in-memory POSIX-like file system for simulated containers: directories,
 * regular files, symlinks, /dev/null, mounts (shared directory objects, e.g.
 * an emptyDir mounted by two containers) and read-only mounts; plus the
 * kubelet AtomicWriter layout used by ConfigMap, Secret, downwardAPI and
 * projected volumes (`..<timestamp>/key`, `..data -> ..<timestamp>`,
 * `key -> ..data/key`) and its atomic update.
 *
 * Nothing here reads the clock: the owner sets `fs.now` (virtual ms) before
 * changes, and mtimes come from it.
 */

export interface FileNode {
  type: 'file';
  data: Buffer;
  mode: number;
  mtime: number;
}
export interface DirNode {
  type: 'dir';
  entries: Map<string, FsNode>;
  mode: number;
  mtime: number;
}
export interface SymlinkNode {
  type: 'symlink';
  target: string;
  mode: number;
  mtime: number;
}
/** A character device; only `null` (reads empty, writes discarded). */
export interface DevNode {
  type: 'dev';
  dev: 'null';
  mode: number;
  mtime: number;
}
export type FsNode = FileNode | DirNode | SymlinkNode | DevNode;

export type FsErrorCode = 'ENOENT' | 'EISDIR' | 'ENOTDIR' | 'EEXIST' | 'EROFS' | 'ENOTEMPTY' | 'ELOOP' | 'EINVAL' | 'EBUSY';

const MESSAGES: Record<FsErrorCode, string> = {
  ENOENT: 'No such file or directory',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  EEXIST: 'File exists',
  EROFS: 'Read-only file system',
  ENOTEMPTY: 'Directory not empty',
  ELOOP: 'Symbolic link loop',
  EINVAL: 'Invalid argument',
  EBUSY: 'Resource busy',
};

export class FsError extends Error {
  constructor(
    readonly code: FsErrorCode,
    readonly path: string,
  ) {
    super(MESSAGES[code]);
  }
}

/** The text busybox prints for an errno (`No such file or directory`). */
export function errorText(e: unknown): string {
  return e instanceof FsError ? e.message : String(e instanceof Error ? e.message : e);
}

const EMPTY = Buffer.alloc(0);

export function newDir(mode = 0o755, mtime = 0): DirNode {
  return { type: 'dir', entries: new Map(), mode, mtime };
}
export function newFile(content: string | Buffer, mode = 0o644, mtime = 0): FileNode {
  return { type: 'file', data: typeof content === 'string' ? Buffer.from(content) : content, mode, mtime };
}
export function newSymlink(target: string, mtime = 0): SymlinkNode {
  return { type: 'symlink', target, mode: 0o777, mtime };
}

/** Normalizes an absolute or cwd-relative path into components (no symlinks resolved). */
export function splitPath(path: string, cwd = '/'): string[] {
  const full = path.startsWith('/') ? path : `${cwd}/${path}`;
  const out: string[] = [];
  for (const c of full.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') out.pop();
    else out.push(c);
  }
  return out;
}
export function joinPath(parts: string[]): string {
  return '/' + parts.join('/');
}
export function basename(p: string): string {
  const t = p.replace(/\/+$/, '');
  if (t === '') return p.startsWith('/') ? '/' : '';
  const i = t.lastIndexOf('/');
  return i < 0 ? t : t.slice(i + 1);
}
export function dirname(p: string): string {
  const t = p.replace(/\/+$/, '');
  if (t === '') return p.startsWith('/') ? '/' : '.';
  const i = t.lastIndexOf('/');
  if (i < 0) return '.';
  const d = t.slice(0, i).replace(/\/+$/, '');
  return d === '' ? '/' : d;
}

interface Mount {
  /** A directory object, or a file bind-mounted over a path (kubelet's /etc/hosts, /dev/termination-log). */
  node: FsNode;
  readOnly: boolean;
}

/** Result of resolving a path: the node (if any), its parent directory and canonical path. */
export interface Resolved {
  node: FsNode | undefined;
  parent: DirNode;
  name: string;
  /** Canonical components (symlinks in directories resolved; the last one as asked). */
  parts: string[];
  readOnly: boolean;
}

export interface MountOptions {
  readOnly?: boolean;
}

export class FileSystem {
  /** Virtual time (ms since epoch) used for mtimes. */
  now = 0;
  readonly root: DirNode;
  private readonly mounts = new Map<string, Mount>();
  private rootReadOnly = false;

  constructor(root?: DirNode) {
    this.root = root ?? newDir(0o755);
  }

  /**
   * Mounts a directory object at `path` (created if missing, like the kubelet's
   * mount point). Several file systems may mount the same DirNode: writes by
   * one are seen by the others (emptyDir shared by containers).
   */
  mount(path: string, dir: DirNode, opts: MountOptions = {}): void {
    const parts = splitPath(path);
    if (parts.length === 0) throw new FsError('EBUSY', path);
    const parentParts = parts.slice(0, -1);
    this.mkdirp(joinPath(parentParts), 0o755, true);
    const parent = this.resolve(joinPath(parentParts), '/', true);
    const pnode = parent.node;
    if (!pnode || pnode.type !== 'dir') throw new FsError('ENOTDIR', path);
    const name = parts[parts.length - 1]!;
    const key = joinPath([...parent.parts, name]);
    // Keep a mount point entry so that `ls` of the parent shows it.
    if (!childEntry(pnode, name)) setEntry(pnode, name, newDir(0o755, this.now));
    this.mounts.set(key, { node: dir, readOnly: opts.readOnly ?? false });
  }

  /** The directory object mounted at a path, if any (for sharing it with another container). */
  mountedAt(path: string): DirNode | undefined {
    const n = this.mounts.get(joinPath(splitPath(path)))?.node;
    return n?.type === 'dir' ? n : undefined;
  }

  /**
   * Makes the root read-only (securityContext.readOnlyRootFilesystem): every
   * path is then read-only except under a mount that is not, e.g. a volume, or
   * a file bound with bindFile (kubelet's /etc/hosts, /dev/termination-log).
   */
  setRootReadOnly(readOnly: boolean): void {
    this.rootReadOnly = readOnly;
  }

  /** Bind-mounts the existing file at `path` over itself with its own read-only flag. */
  bindFile(path: string, opts: MountOptions = {}): void {
    const r = this.resolve(path);
    if (!r.node) throw new FsError('ENOENT', path);
    this.mounts.set(joinPath(r.parts), { node: r.node, readOnly: opts.readOnly ?? false });
  }

  private childOf(dir: DirNode, parts: string[], name: string): FsNode | undefined {
    const m = this.mounts.get(joinPath([...parts, name]));
    if (m) return m.node;
    return childEntry(dir, name);
  }

  /** The read-only flag at a path: its own mount's, else what it inherits. */
  private roAt(parts: string[], inherited: boolean): boolean {
    if (parts.length === 0) return this.rootReadOnly;
    const m = this.mounts.get(joinPath(parts));
    return m ? m.readOnly : inherited;
  }

  /**
   * Resolves a path. Symlinks in intermediate components are always followed,
   * the last one only when `follow`. Throws ENOENT/ENOTDIR when an
   * intermediate directory is missing; the last node may be undefined.
   */
  resolve(path: string, cwd = '/', follow = true, depth = 0): Resolved {
    if (depth > 40) throw new FsError('ELOOP', path);
    const parts = splitPath(path, cwd);
    let dir: DirNode = this.root;
    let canon: string[] = [];
    let readOnly = this.roAt([], false);
    if (parts.length === 0) return { node: this.root, parent: this.root, name: '', parts: [], readOnly };
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i]!;
      const last = i === parts.length - 1;
      const node = this.childOf(dir, canon, name);
      if (last) {
        if (node && node.type === 'symlink' && follow) {
          const target = node.target.startsWith('/') ? node.target : joinPath([...canon, node.target]);
          return this.resolve(target, '/', true, depth + 1);
        }
        const childRo = this.roAt([...canon, name], readOnly);
        return { node, parent: dir, name, parts: [...canon, name], readOnly: childRo };
      }
      if (!node) throw new FsError('ENOENT', path);
      if (node.type === 'symlink') {
        const target = node.target.startsWith('/') ? node.target : joinPath([...canon, node.target]);
        const r = this.resolve(target, '/', true, depth + 1);
        if (!r.node) throw new FsError('ENOENT', path);
        if (r.node.type !== 'dir') throw new FsError('ENOTDIR', path);
        dir = r.node;
        canon = r.parts;
        readOnly = r.readOnly;
        continue;
      }
      if (node.type !== 'dir') throw new FsError('ENOTDIR', path);
      canon = [...canon, name];
      readOnly = this.roAt(canon, readOnly);
      dir = node;
    }
    throw new Error('unreachable');
  }

  /** The node at a path, or undefined (never throws for missing paths). */
  stat(path: string, cwd = '/', follow = true): FsNode | undefined {
    try {
      return this.resolve(path, cwd, follow).node;
    } catch {
      return undefined;
    }
  }

  exists(path: string, cwd = '/'): boolean {
    return this.stat(path, cwd) !== undefined;
  }

  /** Whether writes at this path fail with EROFS. */
  isReadOnly(path: string, cwd = '/'): boolean {
    try {
      return this.resolve(path, cwd, false).readOnly;
    } catch {
      return false;
    }
  }

  readFile(path: string, cwd = '/'): Buffer {
    const r = this.resolve(path, cwd, true);
    if (!r.node) throw new FsError('ENOENT', path);
    if (r.node.type === 'dir') throw new FsError('EISDIR', path);
    if (r.node.type === 'dev') return Buffer.alloc(0);
    if (r.node.type === 'symlink') throw new FsError('ELOOP', path);
    return r.node.data;
  }

  readText(path: string, cwd = '/'): string {
    return this.readFile(path, cwd).toString('utf8');
  }

  /** Writes (or appends to) a regular file, creating it with `mode` if missing. */
  writeFile(path: string, data: string | Buffer, opts: { append?: boolean; mode?: number; cwd?: string } = {}): void {
    const r = this.resolve(path, opts.cwd ?? '/', true);
    // Empty files (every container's /dev/termination-log) share one Buffer: no byte of it can change.
    const buf = typeof data === 'string' ? (data === '' ? EMPTY : Buffer.from(data)) : data;
    if (r.node) {
      if (r.node.type === 'dir') throw new FsError('EISDIR', path);
      if (r.node.type === 'dev') return;
      if (r.readOnly) throw new FsError('EROFS', path);
      if (r.node.type === 'file') {
        r.node.data = opts.append ? Buffer.concat([r.node.data, buf]) : buf;
        r.node.mtime = this.now;
      }
      return;
    }
    if (r.readOnly) throw new FsError('EROFS', path);
    setEntry(r.parent, r.name, newFile(buf, opts.mode ?? 0o644, this.now));
    r.parent.mtime = this.now;
  }

  mkdir(path: string, mode = 0o755, cwd = '/'): void {
    const r = this.resolve(path, cwd, false);
    if (r.node) throw new FsError('EEXIST', path);
    if (r.readOnly) throw new FsError('EROFS', path);
    setEntry(r.parent, r.name, newDir(mode, this.now));
    r.parent.mtime = this.now;
  }

  /** mkdir -p. `force` bypasses read-only checks (used to create mount points). */
  mkdirp(path: string, mode = 0o755, force = false, cwd = '/'): void {
    const parts = splitPath(path, cwd);
    for (let i = 1; i <= parts.length; i++) {
      const p = joinPath(parts.slice(0, i));
      const r = this.resolve(p, '/', true);
      if (r.node) {
        if (r.node.type !== 'dir') throw new FsError(i === parts.length ? 'EEXIST' : 'ENOTDIR', path);
        continue;
      }
      if (r.readOnly && !force) throw new FsError('EROFS', path);
      setEntry(r.parent, r.name, newDir(mode, this.now));
      r.parent.mtime = this.now;
    }
  }

  readdir(path: string, cwd = '/'): string[] {
    const r = this.resolve(path, cwd, true);
    if (!r.node) throw new FsError('ENOENT', path);
    if (r.node.type !== 'dir') throw new FsError('ENOTDIR', path);
    const names = new Set(r.node.entries.keys());
    return [...names].sort();
  }

  /** The node of a directory entry as seen through mounts (for ls). */
  entry(dirPath: string, name: string, cwd = '/'): FsNode | undefined {
    const r = this.resolve(dirPath, cwd, true);
    if (!r.node || r.node.type !== 'dir') return undefined;
    return this.childOf(r.node, r.parts, name);
  }

  /** Removes a file, symlink or (when `recursive`) a directory tree. */
  remove(path: string, opts: { recursive?: boolean; dirOnly?: boolean; cwd?: string } = {}): void {
    const r = this.resolve(path, opts.cwd ?? '/', false);
    if (!r.node) throw new FsError('ENOENT', path);
    if (r.parts.length === 0) throw new FsError('EBUSY', path);
    if (this.mounts.has(joinPath(r.parts))) throw new FsError('EBUSY', path);
    if (r.readOnly) throw new FsError('EROFS', path);
    if (r.node.type === 'dir') {
      if (opts.dirOnly) {
        if (r.node.entries.size > 0) throw new FsError('ENOTEMPTY', path);
      } else if (!opts.recursive) throw new FsError('EISDIR', path);
    } else if (opts.dirOnly) throw new FsError('ENOTDIR', path);
    r.parent.entries.delete(r.name);
    r.parent.mtime = this.now;
  }

  rename(from: string, to: string, cwd = '/'): void {
    const a = this.resolve(from, cwd, false);
    if (!a.node) throw new FsError('ENOENT', from);
    let b = this.resolve(to, cwd, true);
    if (b.node && b.node.type === 'dir') b = this.resolve(joinPath([...b.parts, a.name]), '/', false);
    if (a.readOnly || b.readOnly) throw new FsError('EROFS', from);
    if (b.parts.length > a.parts.length && a.parts.every((c, i) => b.parts[i] === c)) throw new FsError('EINVAL', to);
    if (this.mounts.has(joinPath(a.parts))) throw new FsError('EBUSY', from);
    if (b.node && b.node.type === 'dir') throw new FsError('EISDIR', to);
    a.parent.entries.delete(a.name);
    b.parent.entries.set(b.name, a.node);
    a.parent.mtime = b.parent.mtime = this.now;
  }

  symlink(target: string, path: string, cwd = '/'): void {
    const r = this.resolve(path, cwd, false);
    if (r.node) throw new FsError('EEXIST', path);
    if (r.readOnly) throw new FsError('EROFS', path);
    setEntry(r.parent, r.name, newSymlink(target, this.now));
  }

  readlink(path: string, cwd = '/'): string {
    const r = this.resolve(path, cwd, false);
    if (!r.node) throw new FsError('ENOENT', path);
    if (r.node.type !== 'symlink') throw new FsError('EINVAL', path);
    return r.node.target;
  }

  /** The canonical path with every symlink resolved (readlink -f / realpath). */
  realpath(path: string, cwd = '/'): string {
    const r = this.resolve(path, cwd, true);
    if (!r.node) throw new FsError('ENOENT', path);
    return joinPath(r.parts);
  }

  chmod(path: string, mode: number, cwd = '/'): void {
    const r = this.resolve(path, cwd, true);
    if (!r.node) throw new FsError('ENOENT', path);
    if (r.readOnly) throw new FsError('EROFS', path);
    r.node.mode = mode & 0o7777;
  }

  touch(path: string, cwd = '/'): void {
    const r = this.resolve(path, cwd, true);
    if (r.node) {
      if (r.readOnly) throw new FsError('EROFS', path);
      r.node.mtime = this.now;
      return;
    }
    this.writeFile(path, '', { cwd });
  }
}

/** Deep copy of a node tree (for `cp -r`). */
export function cloneNode(n: FsNode, mtime: number): FsNode {
  switch (n.type) {
    case 'file':
      return { type: 'file', data: Buffer.from(n.data), mode: n.mode, mtime };
    case 'symlink':
      return { type: 'symlink', target: n.target, mode: n.mode, mtime };
    case 'dev':
      return { ...n };
    case 'dir': {
      const d = newDir(n.mode, mtime);
      for (const [k, v] of n.entries) d.entries.set(k, cloneNode(v, mtime));
      return d;
    }
  }
}

/** Size as `ls -l` shows it. */
export function nodeSize(n: FsNode): number {
  switch (n.type) {
    case 'file':
      return n.data.length;
    case 'symlink':
      return Buffer.byteLength(n.target);
    case 'dir':
      return 4096;
    case 'dev':
      return 0;
  }
}

/** `-rw-r--r--` style mode string. */
export function modeString(n: FsNode): string {
  const t = n.type === 'dir' ? 'd' : n.type === 'symlink' ? 'l' : n.type === 'dev' ? 'c' : '-';
  const m = n.type === 'symlink' ? 0o777 : n.mode;
  const rwx = (b: number, s: boolean, sc: string): string =>
    (b & 4 ? 'r' : '-') + (b & 2 ? 'w' : '-') + (s ? (b & 1 ? sc : sc.toUpperCase()) : b & 1 ? 'x' : '-');
  return (
    t +
    rwx((m >> 6) & 7, (m & 0o4000) !== 0, 's') +
    rwx((m >> 3) & 7, (m & 0o2000) !== 0, 's') +
    rwx(m & 7, (m & 0o1000) !== 0, 't')
  );
}

// ---------------------------------------------------------------------------
// Standard container file system

export interface StandardFsOptions {
  hostname?: string;
  /** /etc/hosts content; default the kubelet-managed one for `hostname` at 127.0.0.1. */
  hosts?: string;
  resolvConf?: string;
  podIP?: string;
  now?: number;
  /** What the tree starts as (fsTemplate(): the standard tree plus an image's files); default the standard tree. */
  template?: DirNode;
}

/**
 * A directory of a file system made from a template (createStandardFs). It
 * shows the template directory's content but copies it into entries of its
 * own only when they are used, and its children likewise (a file keeps the
 * template's bytes: writes replace a file's Buffer, never change it in place).
 * Thousands of containers of one image so hold only the few directories they
 * touch (/, /etc, the way to a volume's mount point) instead of the whole
 * tree each, and nothing a container does reaches the template or another
 * container: only the copies are ever handed out.
 *
 * Looking a name up on the way to a path (`child`, what resolve uses) copies
 * that one child; `entries` (listings, any change of the directory) copies
 * them all, the children already copied included, in the template's order.
 *
 * Every node starts with the file system's creation time as mtime (as when
 * each container built its tree itself at that time), so a template's own
 * mtimes do not matter and one template serves containers created at any time.
 */
class TemplateDir implements DirNode {
  readonly type = 'dir' as const;
  mode: number;
  mtime: number;
  /** The template directory, until all its entries are copied. */
  private template: DirNode | undefined;
  /** The entries: all of them once `template` is undefined, else those copied so far. */
  private own: Map<string, FsNode> | undefined;

  constructor(
    template: DirNode,
    /** The creation time of the file system: every copied node's mtime. */
    private readonly born: number,
  ) {
    this.template = template;
    this.mode = template.mode;
    this.mtime = born;
  }

  /** The entry `name`, copying only it from the template. */
  child(name: string): FsNode | undefined {
    const n = this.own?.get(name);
    if (n || !this.template) return n;
    const t = this.template.entries.get(name);
    if (!t) return undefined;
    const copy = instantiate(t, this.born);
    (this.own ??= new Map()).set(name, copy);
    return copy;
  }

  /** Sets the entry `name`, copying nothing else from the template. */
  setChild(name: string, node: FsNode): void {
    (this.own ??= new Map()).set(name, node);
  }

  get entries(): Map<string, FsNode> {
    if (this.template) {
      const all = new Map<string, FsNode>();
      for (const [name, t] of this.template.entries) all.set(name, this.own?.get(name) ?? instantiate(t, this.born));
      // entries added since (setChild) come after the template's, as if added to a full copy
      if (this.own) for (const [name, n] of this.own) if (!all.has(name)) all.set(name, n);
      this.own = all;
      this.template = undefined;
    }
    return this.own!;
  }

  set entries(m: Map<string, FsNode>) {
    this.own = m;
    this.template = undefined;
  }
}

/** The entry `name` of `dir`; walking through a template's directory copies only the entry taken. */
export function childEntry(dir: DirNode, name: string): FsNode | undefined {
  return dir instanceof TemplateDir ? dir.child(name) : dir.entries.get(name);
}

/** Sets the entry `name` of `dir`; in a template's directory, without copying its other entries. */
export function setEntry(dir: DirNode, name: string, node: FsNode): void {
  if (dir instanceof TemplateDir) dir.setChild(name, node);
  else dir.entries.set(name, node);
}

/** A container's own node for a template node (a directory's content is copied when first used). */
function instantiate(n: FsNode, mtime: number): FsNode {
  switch (n.type) {
    case 'dir':
      return new TemplateDir(n, mtime);
    case 'file':
      return { type: 'file', data: n.data, mode: n.mode, mtime };
    case 'symlink':
      return { type: 'symlink', target: n.target, mode: n.mode, mtime };
    case 'dev':
      return { type: 'dev', dev: n.dev, mode: n.mode, mtime };
  }
}

/** Templates are never handed out, only copied from: frozen, so that a slip that would change one throws instead. */
function freezeTree(n: FsNode): void {
  Object.freeze(n);
  if (n.type === 'dir') for (const c of n.entries.values()) freezeTree(c);
}

/** The files each container gets with its own content (createStandardFs's options). */
const PER_CONTAINER_FILES = ['/etc/hostname', '/etc/hosts', '/etc/resolv.conf'] as const;

/** The part of the standard tree every container has alike (created in this order: what unsorted walks such as `find` show). */
function populateStandard(fs: FileSystem): void {
  for (const d of ['/bin', '/sbin', '/usr/bin', '/usr/sbin', '/usr/local/bin', '/etc', '/root', '/home', '/var', '/var/log', '/var/run', '/proc', '/proc/self', '/sys', '/dev', '/run', '/opt', '/srv', '/mnt']) {
    fs.mkdirp(d);
  }
  fs.mkdirp('/tmp', 0o1777);
  fs.chmod('/tmp', 0o1777);
  const dev = fs.root.entries.get('dev');
  if (dev && dev.type === 'dir') dev.entries.set('null', { type: 'dev', dev: 'null', mode: 0o666, mtime: fs.now });
  // Placeholders, so that these files keep their place in /etc (filled in by personalize).
  for (const f of PER_CONTAINER_FILES) fs.writeFile(f, '');
  fs.writeFile('/etc/passwd', 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n');
  fs.writeFile('/etc/group', 'root:x:0:\nnogroup:x:65534:\n');
}

/**
 * Writes /etc/hostname, /etc/hosts and /etc/resolv.conf over whatever the
 * template has there, as the runtime bind-mounts them over the image's.
 */
function personalize(fs: FileSystem, opts: StandardFsOptions): void {
  const hostname = opts.hostname ?? 'localhost';
  const ip = opts.podIP ?? '127.0.0.1';
  const content: Record<(typeof PER_CONTAINER_FILES)[number], string> = {
    '/etc/hostname': hostname + '\n',
    '/etc/hosts':
      opts.hosts ??
      `# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n${ip}\t${hostname}\n`,
    '/etc/resolv.conf': opts.resolvConf ?? 'search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.96.0.10\noptions ndots:5\n',
  };
  fs.mkdirp('/etc', 0o755, true);
  for (const f of PER_CONTAINER_FILES) {
    const n = fs.stat(f, '/', false);
    if (n && n.type !== 'file') fs.remove(f, { recursive: true });
    fs.writeFile(f, content[f]);
  }
}

const templates = new Map<string, DirNode>();

/**
 * The immutable tree createStandardFs starts from: the standard directories
 * and files, plus what `seed` adds (an image's files: only files and
 * directories, no mounts). With a `key` naming what the seed does (the
 * image), the template is built once per key and shared by every file system
 * made from it; without one, it is built afresh.
 */
export function fsTemplate(seed?: (fs: FileSystem) => void, key?: string): DirNode {
  const cacheKey = seed === undefined ? '' : key === undefined ? undefined : `seed:${key}`;
  const cached = cacheKey === undefined ? undefined : templates.get(cacheKey);
  if (cached) return cached;
  const fs = new FileSystem();
  populateStandard(fs);
  seed?.(fs);
  freezeTree(fs.root);
  if (cacheKey !== undefined) templates.set(cacheKey, fs.root);
  return fs.root;
}

/** A container root file system with /etc/hostname, /etc/hosts, /etc/resolv.conf, /tmp, /dev/null, /bin, ... */
export function createStandardFs(opts: StandardFsOptions = {}): FileSystem {
  const now = opts.now ?? 0;
  const fs = new FileSystem(new TemplateDir(opts.template ?? fsTemplate(), now));
  fs.now = now;
  personalize(fs, opts);
  return fs;
}

// ---------------------------------------------------------------------------
// kubelet AtomicWriter layout

export interface VolumeFile {
  content: string | Buffer;
  /** File mode; default 0644 (the volume's defaultMode). */
  mode?: number;
}

/** `..2026_11_26_18_02_07.123456789`, as kubelet's AtomicWriter names its data directories. */
export function atomicDirName(nowMs: number): string {
  const d = new Date(nowMs);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  const nanos = p((((nowMs % 1000) + 1000) % 1000) * 1_000_000, 9);
  return `..${d.getUTCFullYear()}_${p(d.getUTCMonth() + 1)}_${p(d.getUTCDate())}_${p(d.getUTCHours())}_${p(d.getUTCMinutes())}_${p(d.getUTCSeconds())}.${nanos}`;
}

function fillPayload(dir: DirNode, files: Record<string, VolumeFile>, nowMs: number): void {
  for (const [key, f] of Object.entries(files)) {
    const parts = key.split('/').filter((x) => x !== '');
    let d = dir;
    for (const c of parts.slice(0, -1)) {
      let n = d.entries.get(c);
      if (!n || n.type !== 'dir') {
        n = newDir(0o755, nowMs);
        d.entries.set(c, n);
      }
      d = n;
    }
    d.entries.set(parts[parts.length - 1]!, newFile(f.content, f.mode ?? 0o644, nowMs));
  }
}

/**
 * Builds a volume directory in kubelet's AtomicWriter layout:
 * `..<ts>/key` (the data), `..data -> ..<ts>`, and for each top-level name
 * `name -> ..data/name`. Mount it with `fs.mount(path, dir, { readOnly: true })`.
 */
export function buildAtomicVolume(files: Record<string, VolumeFile>, nowMs: number): DirNode {
  const dir = newDir(0o1777, nowMs);
  updateAtomicVolume(dir, files, nowMs);
  return dir;
}

/**
 * Atomically replaces a volume's payload as kubelet does: writes a new
 * timestamped directory, swaps `..data` to it, adds/removes the top-level
 * links and deletes the old data directory. Returns false when nothing changed.
 */
export function updateAtomicVolume(dir: DirNode, files: Record<string, VolumeFile>, nowMs: number): boolean {
  const cur = dir.entries.get('..data');
  const oldName = cur && cur.type === 'symlink' ? cur.target : undefined;
  if (oldName) {
    const old = dir.entries.get(oldName);
    if (old && old.type === 'dir' && samePayload(old, files)) return false;
  }
  let name = atomicDirName(nowMs);
  for (let i = 1; dir.entries.has(name); i++) name = `${atomicDirName(nowMs)}${i}`;
  const data = newDir(0o755, nowMs);
  fillPayload(data, files, nowMs);
  dir.entries.set(name, data);
  dir.entries.set('..data', newSymlink(name, nowMs));
  const top = new Set(Object.keys(files).map((k) => k.split('/').filter((x) => x !== '')[0]!));
  for (const [k, v] of [...dir.entries]) {
    if (k.startsWith('..')) continue;
    if (v.type === 'symlink' && !top.has(k)) dir.entries.delete(k);
  }
  for (const t of top) if (!dir.entries.has(t)) dir.entries.set(t, newSymlink(`..data/${t}`, nowMs));
  if (oldName && oldName !== name) dir.entries.delete(oldName);
  dir.mtime = nowMs;
  return true;
}

function samePayload(dir: DirNode, files: Record<string, VolumeFile>): boolean {
  const want = new Map<string, VolumeFile>(Object.entries(files).map(([k, v]) => [k.split('/').filter((x) => x !== '').join('/'), v]));
  const have = new Map<string, FileNode>();
  const walk = (d: DirNode, prefix: string): void => {
    for (const [k, v] of d.entries) {
      if (v.type === 'dir') walk(v, prefix + k + '/');
      else if (v.type === 'file') have.set(prefix + k, v);
    }
  };
  walk(dir, '');
  if (have.size !== want.size) return false;
  for (const [k, f] of want) {
    const h = have.get(k);
    if (!h) return false;
    const buf = typeof f.content === 'string' ? Buffer.from(f.content) : f.content;
    if (!h.data.equals(buf) || h.mode !== (f.mode ?? 0o644)) return false;
  }
  return true;
}
