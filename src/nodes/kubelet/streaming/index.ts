/**
 * Kubelet streaming for `kubectl exec`, `attach` and `port-forward`:
 * SPDY/3.1 and WebSocket transports with the Kubernetes channel protocols.
 * See remotecommand.ts and portforward.ts for the protocol details.
 */
export { parseExecQuery, serveRemoteCommand, outcomeStatus } from './remotecommand.js';
export type { ExecStreams, ExecOutcome, ExecRequestOptions, TerminalSize } from './remotecommand.js';
export { servePortForward, parsePortForwardQuery, forwardError } from './portforward.js';
export type { PortConnector } from './portforward.js';
