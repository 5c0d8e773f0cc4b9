/**
 * docs/runtime-tutorial.md, run as a reader runs it: every ```sh block in
 * order, in one scratch directory, with $KCM pointing at this checkout.
 *
 * - Blocks whose first line says "# in a second/third terminal" keep
 *   running: they are started in the background (each with the shell state
 *   of the moment) and stopped at the end. `npx kcm up` gets
 *   `--secure-port 0 --controller-manager-secure-port 0`, so the test does
 *   not take 6443 from anyone.
 * - Other blocks run to completion, one after the other; the working
 *   directory and exported variables carry over, as in a terminal.
 * - The operator's source files the tutorial writes must be the example
 *   operator's (examples/operator/src), so the two never drift apart.
 *
 * npm installs go through npm's cache first (--prefer-offline).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { kcmBin } from './harness.js';

const root = join(kcmBin, '..', '..');
const tutorial = readFileSync(join(root, 'docs', 'runtime-tutorial.md'), 'utf8');

interface Block {
  code: string;
  background: boolean;
}

function blocks(md: string): Block[] {
  const out: Block[] = [];
  const re = /```sh\n([\s\S]*?)\n```/g;
  for (let m = re.exec(md); m; m = re.exec(md)) {
    const code = m[1]!;
    out.push({ code, background: /^# in a (second|third|another) terminal/.test(code) });
  }
  return out;
}

/** The heredocs `cat > FILE <<'TAG' ... TAG` of the tutorial, by file. */
function heredocs(md: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /cat > (\S+) <<'(\w+)'\n([\s\S]*?)\n\2\n/g;
  for (let m = re.exec(md); m; m = re.exec(md)) out.set(m[1]!, m[3]!);
  return out;
}

function run(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('docs/runtime-tutorial.md', () => {
  const work = mkdtempSync(join(tmpdir(), 'kcm-tutorial-'));
  const state = join(work, '.state');
  const background: ChildProcess[] = [];
  // If this file is stopped (a timeout), the background commands (kcm up, the operator) must not outlive it:
  // a leftover operator holds its ports and breaks the next run.
  const killBackground = () => {
    for (const p of background) {
      try {
        process.kill(-p.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', killBackground);
  process.once('SIGTERM', () => {
    killBackground();
    process.exit(143);
  });

  after(async () => {
    for (const p of background) {
      try {
        process.kill(-p.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await Promise.all(background.map((p) => (p.exitCode === null && p.signalCode === null ? new Promise((r) => p.on('exit', r)) : undefined)));
    rmSync(work, { recursive: true, force: true });
  });

  it('writes the example operator\'s files', () => {
    const files = heredocs(tutorial);
    for (const f of ['resources.ts', 'dns.ts', 'controller.ts', 'webhooks.ts', 'main.ts']) {
      assert.equal(files.get(`src/${f}`), readFileSync(join(root, 'examples', 'operator', 'src', f), 'utf8').replace(/\n$/, ''), `src/${f} differs from examples/operator/src/${f}`);
    }
  });

  it('runs every command, from an empty directory to the operator reconciling on kcm up', async () => {
    // Not inside our test run: the tutorial's own `node --test` must run its files.
    const { NODE_TEST_CONTEXT: _ctx, ...outer } = process.env;
    const env: NodeJS.ProcessEnv = {
      ...outer,
      KCM: root,
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
      KUBECONFIG: '',
      // kubectl's discovery cache of its own (see kubectlEnv in harness.ts)
      KUBECACHEDIR: join(work, '.kube-cache'),
    };
    // The shell state carried from block to block: working directory and exported variables.
    writeFileSync(state, `cd ${JSON.stringify(work)}\n`);
    const save = `\n{ echo "cd $(printf %q "$PWD")"; export -p; } > ${JSON.stringify(state)}\n`;
    for (const [i, block] of blocks(tutorial).entries()) {
      let code = block.code.replace(/^npx kcm up$/m, 'npx kcm up --secure-port 0 --controller-manager-secure-port 0');
      if (block.background) {
        const child = spawn('bash', ['-c', `source ${JSON.stringify(state)}\n${code}`], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        let out = '';
        child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.on('exit', (c, sig) => {
          if (sig === null && c !== 0) process.stderr.write(`tutorial background block ${i} exited ${c}:\n${out}\n`);
        });
        background.push(child);
        continue;
      }
      code = `source ${JSON.stringify(state)}\n${code}${save}`;
      const r = await run(code, work, env, 180_000);
      assert.equal(r.code, 0, `block ${i} failed:\n${block.code}\n--- output ---\n${r.out}`);
      if (/kubectl get staticsites/.test(block.code)) {
        assert.match(r.out, /NAME\s+DOMAIN\s+REPLICAS\s+AVAILABLE\s+READY\s+AGE\nhome\s+home\.example\.com\s+2\s+2\s+True/);
        assert.match(r.out, /"home\.example\.com":"10\.\d+\.\d+\.\d+"/);
      }
      if (/kubectl delete staticsite home/.test(block.code)) assert.doesNotMatch(r.out, /home\.example\.com/);
      if (/node --test dist\//.test(block.code)) assert.match(r.out, /# pass 1\n# fail 0/);
    }
  });
});
