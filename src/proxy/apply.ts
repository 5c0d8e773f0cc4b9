/**
 * `kcm proxy --apply`: loads the computed iptables tables into a network
 * namespace of their own, `kcm-proxy-<node>` (never the host's), with
 * `ip netns exec NS iptables-restore`. Needs root, `ip` and `iptables-restore`.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export class ApplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApplyError';
  }
}

/** The first executable `name` on $PATH (or the usual sbin directories), or undefined. */
export function findExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  const dirs = [...path.split(delimiter), '/usr/sbin', '/sbin', '/usr/local/sbin'].filter((d) => d !== '');
  for (const d of dirs) {
    const p = join(d, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return undefined;
}

/** The namespace `kcm proxy --apply` uses for `node`. */
export function netnsName(node: string): string {
  return `kcm-proxy-${node}`;
}

export interface ApplyTools {
  ip: string;
  iptablesRestore: string;
}

/** Checks that --apply can run here; throws ApplyError with a one-line reason. */
export function checkApply(mode: string): ApplyTools {
  if (mode !== 'iptables') throw new ApplyError('--apply is implemented for --mode=iptables only');
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) throw new ApplyError('--apply needs root (it creates a network namespace)');
  const ip = findExecutable('ip');
  if (!ip) throw new ApplyError('--apply needs the "ip" command (iproute2)');
  const iptablesRestore = findExecutable('iptables-restore');
  if (!iptablesRestore) throw new ApplyError('--apply needs the "iptables-restore" command');
  return { ip, iptablesRestore };
}

function run(cmd: string, args: string[], input?: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** Creates the namespace if needed and restores `rules` (iptables-restore input) into it. */
export async function applyRules(tools: ApplyTools, node: string, rules: string): Promise<void> {
  const ns = netnsName(node);
  const list = await run(tools.ip, ['netns', 'list']);
  if (list.code !== 0) throw new ApplyError(`ip netns list: ${list.stderr.trim()}`);
  const add = await run(tools.ip, ['netns', 'add', ns]);
  if (add.code !== 0 && !/exist/i.test(add.stderr)) throw new ApplyError(`ip netns add ${ns}: ${add.stderr.trim()}`);
  const res = await run(tools.ip, ['netns', 'exec', ns, tools.iptablesRestore], rules);
  if (res.code !== 0) throw new ApplyError(`iptables-restore in ${ns}: ${res.stderr.trim().split('\n')[0]}`);
}
