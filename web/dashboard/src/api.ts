/** fetch() wrappers that turn a 401 into the "not signed in" banner. */

export class Unauthorized extends Error {
  constructor() {
    super('Not signed in: open the dashboard URL that kcm printed (it carries a login token)');
  }
}

let onUnauthorized: () => void = () => {};
export function setUnauthorizedHandler(f: () => void): void {
  onUnauthorized = f;
}

export async function getJSON<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json' }, signal });
  if (res.status === 401) {
    onUnauthorized();
    throw new Unauthorized();
  }
  if (!res.ok) {
    let detail = '';
    try {
      detail = (await res.text()).slice(0, 300);
    } catch {
      /* ignore */
    }
    throw new Error(`${res.status} ${res.statusText}${detail ? `: ${detail}` : ''}`);
  }
  return (await res.json()) as T;
}

/** Does the server accept our session? (EventSource hides the status of a failed connection.) */
export async function probeAuth(): Promise<'ok' | 'unauthorized' | 'down'> {
  const ctl = new AbortController();
  try {
    const res = await fetch('/api/stream', {
      credentials: 'same-origin',
      headers: { accept: 'text/event-stream' },
      signal: ctl.signal,
    });
    ctl.abort();
    return res.status === 401 ? 'unauthorized' : 'ok';
  } catch {
    return 'down';
  }
}
