/**
 * Go's net/url.Parse, the parts webhook validation and calls depend on:
 * what it accepts (a relative reference parses: `not a url` has no scheme
 * and no host rather than failing) and its error texts
 * (`parse "https://h:x": invalid port ":x" after host`). WHATWG's URL
 * accepts and rejects other strings, so validation cannot use it.
 */

export interface GoUrl {
  /** Lower-cased, '' when absent. */
  scheme: string;
  /** `user` or `user:password` as Go's Userinfo.String() prints it; undefined when absent. */
  user?: string;
  /** host[:port] as written ('' when absent). */
  host: string;
  path: string;
  rawQuery: string;
  fragment: string;
  /** Set for `scheme:opaque` references. */
  opaque: string;
}

/** Go's strconv.Quote for the ASCII texts URLs are. */
function goQuote(s: string): string {
  return JSON.stringify(s).replace(/\\u00([0-9a-f]{2})/g, '\\x$1');
}

/** Parses as Go's url.Parse; throws an Error with Go's message. */
export function parseGoUrl(raw: string): GoUrl {
  const hash = raw.indexOf('#');
  const u = hash >= 0 ? raw.slice(0, hash) : raw;
  const frag = hash >= 0 ? raw.slice(hash + 1) : '';
  let out: GoUrl;
  try {
    out = parse(u);
  } catch (err) {
    throw new Error(`parse ${goQuote(u)}: ${(err as Error).message}`);
  }
  if (frag) {
    try {
      out.fragment = unescape(frag);
    } catch (err) {
      throw new Error(`parse ${goQuote(raw)}: ${(err as Error).message}`);
    }
  }
  return out;
}

function parse(raw: string): GoUrl {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new Error('net/url: invalid control character in URL');
  const url: GoUrl = { scheme: '', host: '', path: '', rawQuery: '', fragment: '', opaque: '' };
  if (raw === '*') {
    url.path = '*';
    return url;
  }
  let rest: string;
  [url.scheme, rest] = scheme(raw);
  url.scheme = url.scheme.toLowerCase();
  if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme) {
      url.opaque = rest;
      return url;
    }
    const segment = rest.split('/')[0]!;
    if (segment.includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((url.scheme || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const at = authority.lastIndexOf('@');
    url.host = parseHost(at < 0 ? authority : authority.slice(at + 1));
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new Error('net/url: invalid userinfo');
      url.user = userinfo;
    }
  }
  url.path = unescape(rest);
  return url;
}

function scheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

function validOptionalPort(port: string): boolean {
  if (port === '') return true;
  return /^:[0-9]*$/.test(port);
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`);
  } else {
    const i = host.lastIndexOf(':');
    if (i >= 0) {
      const colonPort = host.slice(i);
      if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`);
    }
    const bad = /[^A-Za-z0-9\-._~!$&'()*+,;=:%"<>[\]^`{|}]/.exec(host);
    if (bad) throw new Error(`invalid character ${goQuote(bad[0])} in host name`);
  }
  return unescape(host);
}

function unescape(s: string): string {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') continue;
    const code = s.slice(i, i + 3);
    if (!/^%[0-9A-Fa-f]{2}$/.test(code)) throw new Error(`invalid URL escape ${goQuote(code)}`);
  }
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The port of a `host[:port]`, or '' (IPv6 literals in brackets). */
export function portOf(host: string): string {
  const m = /:([0-9]*)$/.exec(host.startsWith('[') ? host.slice(host.lastIndexOf(']') + 1) : host);
  return m ? m[1]! : '';
}

/** The host of a `host[:port]` without port and brackets. */
export function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.lastIndexOf(']'));
  const i = host.lastIndexOf(':');
  return i >= 0 ? host.slice(0, i) : host;
}
