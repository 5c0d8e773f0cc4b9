/**
 * Kubernetes' URL library (library/urls.go) over a port of Go's net/url
 * parsing: url, isURL, getScheme, getHost, getHostname, getPort,
 * getEscapedPath, getQuery. A URL must be an absolute URI or an absolute
 * path (url.ParseRequestURI), and errors read as Go's.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celError, type CelLibrary } from './library.js';

/** A parsed URL (Go's url.URL, the fields Kubernetes reads). */
export class CelURL {
  readonly celTypeName = 'kubernetes.URL';
  scheme = '';
  opaque = '';
  user = '';
  host = '';
  path = '';
  rawPath = '';
  rawQuery = '';
  fragment = '';
  forceQuery = false;

  celEquals(other: unknown): boolean {
    return other instanceof CelURL && other.toString() === this.toString();
  }

  hostname(): string {
    const [host] = splitHostPort(this.host);
    return host;
  }

  port(): string {
    return splitHostPort(this.host)[1];
  }

  escapedPath(): string {
    if (this.rawPath && validEncoded(this.rawPath) && unescape(this.rawPath, 'path') === this.path) return this.rawPath;
    if (this.path === '*') return '*';
    return escape(this.path, 'path');
  }

  query(): Map<string, string[]> {
    const m = new Map<string, string[]>();
    for (let part of this.rawQuery.split('&')) {
      if (part === '' || part.includes(';')) continue;
      let value = '';
      const eq = part.indexOf('=');
      if (eq >= 0) {
        value = part.slice(eq + 1);
        part = part.slice(0, eq);
      }
      let k: string;
      let v: string;
      try {
        k = unescape(part, 'query');
        v = unescape(value, 'query');
      } catch {
        continue;
      }
      const list = m.get(k) ?? [];
      list.push(v);
      m.set(k, list);
    }
    return m;
  }

  toString(): string {
    let out = '';
    if (this.scheme) out += `${this.scheme}:`;
    if (this.opaque) out += this.opaque;
    else {
      if (this.scheme || this.host || this.user) {
        if (this.host || this.path || this.user) out += '//';
        if (this.user) out += `${this.user}@`;
        out += this.host;
      }
      const p = this.escapedPath();
      if (p && p[0] !== '/' && this.host) out += '/';
      out += p;
    }
    if (this.forceQuery || this.rawQuery) out += `?${this.rawQuery}`;
    if (this.fragment) out += `#${escape(this.fragment, 'fragment')}`;
    return out;
  }
}

class UrlError extends Error {}

function splitHostPort(hostPort: string): [string, string] {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

const validOptionalPort = (port: string): boolean => port === '' || (port[0] === ':' && /^[0-9]*$/.test(port.slice(1)));

function shouldEscape(c: string, mode: 'path' | 'host' | 'query' | 'fragment' | 'userinfo'): boolean {
  if (/[A-Za-z0-9]/.test(c)) return false;
  if (mode === 'host') {
    if ("!$&'()*+,;=:[]<>\"".includes(c)) return false;
  }
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    switch (mode) {
      case 'path':
        return c === '?';
      case 'userinfo':
        return c === '@' || c === '/' || c === '?' || c === ':';
      case 'query':
        return true;
      case 'fragment':
        return false;
      default:
        return false;
    }
  }
  if (mode === 'fragment' && "!()*".includes(c)) return false;
  return true;
}

function escape(s: string, mode: 'path' | 'query' | 'fragment' | 'userinfo'): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (b < 0x80 && !shouldEscape(c, mode)) out += c;
    else if (c === ' ' && mode === 'query') out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const validEncoded = (s: string): boolean => !/%(?![0-9a-fA-F]{2})/.test(s);

function unescape(s: string, mode: 'path' | 'host' | 'query' | 'fragment' | 'userinfo'): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      const hex = s.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) {
        throw new UrlError(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      }
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c === '+' && mode === 'query') bytes.push(0x20);
    else {
      if (mode === 'host' && c.charCodeAt(0) < 0x80 && shouldEscape(c, 'host')) throw new UrlError(`invalid character ${JSON.stringify(c)} in host name`);
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${JSON.stringify(colonPort)} after host`);
  } else {
    const i = host.lastIndexOf(':');
    if (i !== -1) {
      const colonPort = host.slice(i);
      if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${JSON.stringify(colonPort)} after host`);
    }
  }
  return unescape(host, 'host');
}

function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new UrlError('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function parse(raw: string, viaRequest: boolean): CelURL {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  const u = new CelURL();
  if (raw === '*') {
    u.path = '*';
    return u;
  }
  const [scheme, afterScheme] = getScheme(raw);
  let rest = afterScheme;
  u.scheme = scheme.toLowerCase();
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    u.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      u.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (u.scheme !== '') {
      u.opaque = rest;
      return u;
    }
    if (viaRequest) throw new UrlError('invalid URI for request');
    const colon = rest.indexOf(':');
    const slash = rest.indexOf('/');
    if (colon >= 0 && (slash < 0 || colon < slash)) throw new UrlError('first path segment in URL cannot contain colon');
  }
  if ((u.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      u.user = authority.slice(0, at);
      u.host = parseHost(authority.slice(at + 1));
    } else u.host = parseHost(authority);
  }
  u.path = unescape(rest, 'path');
  if (escape(u.path, 'path') !== rest) u.rawPath = rest;
  return u;
}

/** Go's url.ParseRequestURI followed by url.Parse, as Kubernetes' url() does. */
export function parseURL(s: string): CelURL {
  try {
    parse(s, true);
    const hash = s.indexOf('#');
    const u = parse(hash >= 0 ? s.slice(0, hash) : s, false);
    if (hash >= 0) u.fragment = unescape(s.slice(hash + 1), 'fragment');
    return u;
  } catch (err) {
    if (err instanceof UrlError) return celError(`URL parse error during conversion from string: parse ${JSON.stringify(s)}: ${err.message}`);
    throw err;
  }
}

export function isURL(s: string): boolean {
  try {
    parse(s, true);
    return true;
  } catch {
    return false;
  }
}

const T = 'kubernetes.URL';

export const urlsLibrary: CelLibrary = {
  name: 'kubernetes.urls',
  functions: ['url', 'isURL', 'getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath', 'getQuery'],
  declare(env: Environment) {
    env
      .registerType(T, { ctor: CelURL, fields: {} })
      .registerFunction(`url(string): ${T}`, (s: string) => parseURL(s))
      .registerFunction('isURL(string): bool', (s: string) => isURL(s))
      .registerFunction(`${T}.getScheme(): string`, (u: CelURL) => u.scheme)
      .registerFunction(`${T}.getHost(): string`, (u: CelURL) => u.host)
      .registerFunction(`${T}.getHostname(): string`, (u: CelURL) => u.hostname())
      .registerFunction(`${T}.getPort(): string`, (u: CelURL) => u.port())
      .registerFunction(`${T}.getEscapedPath(): string`, (u: CelURL) => u.escapedPath())
      .registerFunction(`${T}.getQuery(): map<string, list<string>>`, (u: CelURL) => u.query())
      .registerOperator(`${T} == ${T}`, (a: CelURL, b: CelURL) => a.celEquals(b));
  },
};
