export * from './admission.js';
export * from './namespace-lifecycle.js';
export * from './service-account.js';
export * from './default-toleration-seconds.js';
export * from './priority.js';
export * from './taint-nodes-by-condition.js';
export * from './limit-ranger.js';
export * from './resource-quota.js';
