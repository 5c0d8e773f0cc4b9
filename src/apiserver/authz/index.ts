export * from './rbac.js';
export * from './bootstrap-policy.js';
export * from './always-allow.js';
