/**
 * Entry point of `kcm up`'s controller side, in a child process (forked with
 * an IPC channel) or a worker thread. Protocol:
 *
 *   parent -> { type: 'start', config }   once
 *   parent -> { type: 'stop' }            graceful stop (also: SIGTERM, or the parent going away)
 *   child  -> ControllerSideMessage        progress, then { type: 'stopped', code }
 */
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { runControllerSide, type ControllerSideConfig, type ControllerSideMessage } from './controller-side.js';
import { deferWasmTierUp } from './v8-flags.js';

deferWasmTierUp();

const ac = new AbortController();
const post: (m: ControllerSideMessage) => void = isMainThread
  ? (m) => {
      if (process.connected) process.send?.(m);
    }
  : (m) => parentPort!.postMessage(m);

function start(config: ControllerSideConfig): void {
  runControllerSide(config, ac.signal, post).then(
    (code) => finish(code),
    (err: unknown) => {
      process.stderr.write(`kcm up: controller side failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      finish(1);
    },
  );
}

function finish(code: number): void {
  post({ type: 'stopped', code });
  if (isMainThread) {
    process.exitCode = code;
    // Leave once the message is flushed, even if a stray handle stays open.
    setTimeout(() => process.exit(code), 200).unref();
    if (process.connected) process.disconnect();
  } else {
    parentPort!.close();
  }
}

if (isMainThread) {
  process.on('message', (m: { type: string; config?: ControllerSideConfig }) => {
    if (m.type === 'start' && m.config) start(m.config);
    else if (m.type === 'stop') ac.abort();
  });
  // The supervisor died: stop rather than run orphaned.
  process.on('disconnect', () => ac.abort());
  process.on('SIGTERM', () => ac.abort());
  process.on('SIGINT', () => ac.abort());
} else {
  parentPort!.on('message', (m: { type: string }) => {
    if (m.type === 'stop') ac.abort();
  });
  start(workerData as ControllerSideConfig);
}
