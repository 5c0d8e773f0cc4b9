export * from './jwt.js';
export * from './keys.js';
export * from './claims.js';
