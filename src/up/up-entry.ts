/**
 * What `kcm up`'s command (src/cmd/up.ts) loads once it has forked the
 * controller side: the flags, the API server and the supervisor. One module
 * so that the bundle (scripts/bundle.mjs) can make it one file, as it does
 * the controller side's entry: loading a few hundred split chunks through
 * Node's ESM loader (resolve, read, link each) cost more than compiling their
 * code.
 */
export { UnknownControllerError } from '../controllers/registry.js';
export { parseUpFlags, upFlags } from './options.js';
export { runUp } from './up.js';
export { onTerminationSignal, reportFlagError } from '../cmd/common.js';
export { flagUsage } from '../cmd/flags.js';
