export * from './resource-list.js';
export * from './evaluators.js';
export * from './usage.js';
