export { registerBuiltinTables } from './builtin.js';
export { podSummary, podColumns } from './pods.js';
export { jobStatus, jobCompletions, jobDuration } from './workloads.js';
export { nodeStatus, nodeRoles, serviceExternalIp, formatEndpoints } from './core.js';
