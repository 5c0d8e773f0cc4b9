export * from './rbac.js';
export * from './bootstrap-policy.js';
