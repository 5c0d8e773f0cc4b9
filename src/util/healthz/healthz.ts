/**
 * Health checks in k8s.io/apiserver's healthz format, shared by the
 * controller manager's endpoints and kcm/runtime's probes: `ok` on success;
 * on failure HTTP 500 with one `[+]name ok` / `[-]name failed: reason
 * withheld` line per check and `<endpoint> check failed`.
 */

/** A named check: returns undefined when healthy, else an Error saying why. */
export interface HealthCheck {
  name: string;
  check(): Error | undefined;
}

export interface HealthChecks {
  add(check: HealthCheck): void;
  list(): readonly HealthCheck[];
}

export function newHealthChecks(): HealthChecks {
  const checks: HealthCheck[] = [{ name: 'ping', check: () => undefined }];
  return {
    add: (c) => {
      if (!checks.some((x) => x.name === c.name)) checks.push(c);
    },
    list: () => checks,
  };
}

/** Renders a health endpoint for `checks` (all of them, or the one named by `only`). */
export function renderHealth(endpoint: string, checks: readonly HealthCheck[], verbose: boolean, only?: string): { code: number; body: string } {
  const selected = only === undefined ? checks : checks.filter((c) => c.name === only);
  if (only !== undefined && selected.length === 0) return { code: 404, body: '404 page not found\n' };
  const lines: string[] = [];
  let failed = false;
  for (const c of selected) {
    let err: Error | undefined;
    try {
      err = c.check();
    } catch (e) {
      err = e instanceof Error ? e : new Error(String(e));
    }
    if (err) {
      failed = true;
      lines.push(`[-]${c.name} failed: reason withheld`);
    } else {
      lines.push(`[+]${c.name} ok`);
    }
  }
  if (only !== undefined) return failed ? { code: 500, body: `internal server error: ${selected[0]!.name} check failed\n` } : { code: 200, body: 'ok' };
  if (failed) return { code: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n` };
  return { code: 200, body: verbose ? `${lines.join('\n')}\n${endpoint} check passed\n` : 'ok' };
}

