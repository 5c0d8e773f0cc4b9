/** Tiny DOM helpers: element builder, keyed list reconciliation, formatting. */

type Attr = string | number | boolean | null | undefined | ((ev: Event) => void);
export type Kid = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, Attr> | null,
  ...kids: (Kid | Kid[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
      else if (k === 'class') el.className = String(v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, kids);
  return el;
}

export function append(el: Element, kids: (Kid | Kid[])[]): void {
  for (const k of kids) {
    if (Array.isArray(k)) append(el, k);
    else if (k === null || k === undefined || k === false) continue;
    else el.append(typeof k === 'number' ? String(k) : k);
  }
}

/** Replace all children. */
export function setKids(el: Element, ...kids: (Kid | Kid[])[]): void {
  el.textContent = '';
  append(el, kids);
}

const keyed = new WeakMap<Element, Map<string, HTMLElement>>();

/**
 * Keyed children update: `parent`'s children become one element per item, in
 * order; elements are reused by key (so 5,000 pods cost 5,000 comparisons, not
 * 5,000 new nodes), created when new and removed when gone.
 */
export function reconcile<T>(
  parent: Element,
  items: readonly T[],
  key: (t: T) => string,
  create: (t: T) => HTMLElement,
  update: (el: HTMLElement, t: T) => void,
): void {
  const old = keyed.get(parent) ?? new Map<string, HTMLElement>();
  if (!keyed.has(parent)) parent.textContent = '';
  const next = new Map<string, HTMLElement>();
  let cursor: ChildNode | null = parent.firstChild;
  for (const it of items) {
    const k = key(it);
    let el = old.get(k);
    if (el) old.delete(k);
    else el = create(it);
    update(el, it);
    next.set(k, el);
    if (el === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(el, cursor);
  }
  for (const el of old.values()) el.remove();
  keyed.set(parent, next);
}

/** Set an attribute only when it changed (keeps style recalculation small). */
export function setAttr(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** HH:MM:SS.mmm (local time). */
export function clock(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** 3s, 4m, 2h, 5d */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
}

export function seconds(s: number | null | undefined): string {
  if (s === null || s === undefined || Number.isNaN(s)) return '–';
  if (s === 0) return '0';
  if (s < 0.001) return `${(s * 1e6).toFixed(0)}µs`;
  if (s < 1) return `${(s * 1000).toFixed(s < 0.01 ? 1 : 0)}ms`;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)}s`;
  return age(s * 1000);
}

export function cpu(m: number): string {
  return m >= 1000 ? `${(m / 1000).toFixed(m % 1000 ? 1 : 0)}` : `${Math.round(m)}m`;
}

export function bytes(b: number): string {
  const u = ['B', 'Ki', 'Mi', 'Gi', 'Ti'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) {
    b /= 1024;
    i++;
  }
  return `${b >= 100 || i === 0 ? Math.round(b) : b.toFixed(1)}${u[i]}`;
}

const numFmt = new Intl.NumberFormat('en-US');
export function num(n: number): string {
  return n < 1000 && Number.isInteger(n) ? String(n) : numFmt.format(n);
}

/** A small inline SVG line chart of the values (e.g. a queue's depth over time). */
export function sparkline(values: readonly number[], w = 90, hgt = 18): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', String(w));
  svg.setAttribute('height', String(hgt));
  svg.setAttribute('class', 'spark');
  svg.setAttribute('viewBox', `0 0 ${w} ${hgt}`);
  if (values.length > 1) {
    const max = Math.max(1, ...values);
    const step = w / 59;
    const x0 = w - (values.length - 1) * step;
    const pts = values.map((v, i) => `${(x0 + i * step).toFixed(1)},${(hgt - 1 - (v / max) * (hgt - 2)).toFixed(1)}`);
    const area = document.createElementNS(ns, 'polygon');
    area.setAttribute('points', `${x0.toFixed(1)},${hgt} ${pts.join(' ')} ${w},${hgt}`);
    area.setAttribute('class', 'spark-area');
    const line = document.createElementNS(ns, 'polyline');
    line.setAttribute('points', pts.join(' '));
    line.setAttribute('class', 'spark-line');
    svg.append(area, line);
  }
  return svg;
}
