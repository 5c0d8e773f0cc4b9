/**
 * Runs `kcm up`'s controller side beside the API server, in a child process
 * (default) or a worker thread, so the two use two cores. A crash (exit
 * without being asked to stop) is reported and the side restarted after a
 * backoff (restart-backoff.ts: 1 s doubling to 10 s, reset once the side is
 * ready again or ran for a minute).
 * stop() asks for a graceful stop and kills after `stopTimeoutMs`; it never
 * hangs.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../util/log/logger.js';
import type { ControllerSideConfig, ControllerSideMessage } from './controller-side.js';
import { newRestartBackoff } from './restart-backoff.js';
import { CONTROLLER_SIDE_YOUNG_GENERATION_MB, controllerSideExecArgv } from './v8-flags.js';

export type Isolation = 'process' | 'thread';

export interface SupervisorOptions {
  config: ControllerSideConfig;
  isolation: Isolation;
  logger: Logger;
  onMessage(m: ControllerSideMessage): void;
  /** Called when the side exited unexpectedly and will be restarted. */
  onCrash?(info: { code: number | null; signal: string | null; restartInMs: number; restarts: number }): void;
  stopTimeoutMs?: number;
  /** A process forked earlier (preforkControllerSide) for the first start; isolation "process" only. */
  preforked?: PreforkedProcess;
}

export interface Supervisor {
  /** How many times the side was restarted after a crash. */
  restarts(): number;
  /** Graceful stop; resolves once the side has exited. */
  stop(): Promise<void>;
}

const entry = fileURLToPath(new URL('./controller-side-main.js', import.meta.url));

interface Running {
  exited: Promise<{ code: number | null; signal: string | null }>;
  askStop(): void;
  kill(): void;
}

/**
 * A controller-side process forked before the API server starts, so that it
 * loads its modules (over half a second) while the API server loads and
 * starts; it waits for its config. Used for the first start only.
 */
export interface PreforkedProcess {
  child: ChildProcess;
  /** Kills it when it will not be used (a bad flag, the API server failed to start). */
  discard(): void;
}

/**
 * The forked controller side's environment: the parent's without NODE_EXTRA_CA_CERTS. Node 20 reads and parses
 * that file when a process starts (60 to 70 ms of CPU for a distribution's bundle of 140 certificates, while both
 * cores are busy starting), and the controller side has no use for it: it talks only to kcm up's own API server,
 * whose CA its kubeconfig names.
 */
export function controllerSideEnv(parent: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _unused, ...env } = parent;
  return env;
}

function forkControllerSide(): ChildProcess {
  return fork(entry, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: controllerSideExecArgv(process.execArgv), env: controllerSideEnv(process.env) });
}

export function preforkControllerSide(): PreforkedProcess {
  const child = forkControllerSide();
  // Until it is started it must not keep the parent alive or crash it.
  child.on('error', () => undefined);
  child.unref();
  child.channel?.unref();
  return {
    child,
    discard: () => {
      child.kill('SIGKILL');
    },
  };
}

function startProcess(config: ControllerSideConfig, onMessage: (m: ControllerSideMessage) => void, preforked?: ChildProcess): Running {
  const child = preforked && preforked.exitCode === null && preforked.signalCode === null && preforked.connected ? preforked : forkControllerSide();
  if (child !== preforked) preforked?.kill('SIGKILL');
  child.ref();
  child.channel?.ref();
  child.on('message', (m) => onMessage(m as ControllerSideMessage));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: 'spawn-error' }));
  });
  child.send({ type: 'start', config });
  return {
    exited,
    askStop: () => {
      if (child.connected) child.send({ type: 'stop' });
      else child.kill('SIGTERM');
    },
    kill: () => child.kill('SIGKILL'),
  };
}

function startThread(config: ControllerSideConfig, onMessage: (m: ControllerSideMessage) => void): Running {
  const worker = new Worker(entry, { workerData: config, resourceLimits: { maxYoungGenerationSizeMb: CONTROLLER_SIDE_YOUNG_GENERATION_MB } });
  worker.on('message', (m) => onMessage(m as ControllerSideMessage));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
    worker.once('exit', (code) => resolve({ code, signal: null }));
    worker.once('error', (err) => {
      process.stderr.write(`kcm up: controller thread failed: ${err.stack ?? err.message}\n`);
    });
  });
  return {
    exited,
    askStop: () => worker.postMessage({ type: 'stop' }),
    kill: () => void worker.terminate(),
  };
}

export function startSupervisor(opts: SupervisorOptions): Supervisor {
  let stopping = false;
  let restarts = 0;
  let current: Running | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  const backoff = newRestartBackoff();
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));

  // The preforked process serves the first start only (a thread needs none).
  let preforked = opts.preforked?.child;
  if (opts.isolation === 'thread') {
    opts.preforked?.discard();
    preforked = undefined;
  }
  const launch = (): void => {
    backoff.started(Date.now());
    let stoppedCode: number | undefined;
    const onMessage = (m: ControllerSideMessage) => {
      if (m.type === 'stopped') stoppedCode = m.code;
      // Ready again: the controllers' caches synced.
      if (m.type === 'cm' && m.event.type === 'caches-synced') backoff.ready();
      opts.onMessage(m);
    };
    const child = preforked;
    preforked = undefined;
    current = opts.isolation === 'thread' ? startThread(opts.config, onMessage) : startProcess(opts.config, onMessage, child);
    void current.exited.then(({ code, signal }) => {
      current = undefined;
      if (stopping) {
        done();
        return;
      }
      const delay = backoff.crashed(Date.now());
      restarts++;
      const why = new Error(signal ? `killed by ${signal}` : `exit code ${code ?? stoppedCode ?? 'unknown'}`);
      opts.logger.error(why, { restarts }, `controller side (${opts.isolation}) exited unexpectedly; restarting in ${delay} ms`);
      opts.onCrash?.({ code, signal, restartInMs: delay, restarts });
      restartTimer = setTimeout(() => {
        restartTimer = undefined;
        if (!stopping) launch();
        else done();
      }, delay);
    });
  };
  launch();

  return {
    restarts: () => restarts,
    async stop() {
      if (stopping) return finished;
      stopping = true;
      if (restartTimer) {
        clearTimeout(restartTimer);
        restartTimer = undefined;
        done();
        return finished;
      }
      const running = current;
      if (!running) {
        done();
        return finished;
      }
      running.askStop();
      const timer = setTimeout(() => {
        opts.logger.warn({ timeoutMs: opts.stopTimeoutMs ?? 15_000 }, 'controller side did not stop in time; killing it');
        running.kill();
      }, opts.stopTimeoutMs ?? 15_000);
      await finished;
      clearTimeout(timer);
    },
  };
}
