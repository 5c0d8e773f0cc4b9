export * from './storage.js';
export { newMemoryStorage, type MemoryStorageOptions } from './memory.js';
export { openSqliteStorage, type SqliteStorageOptions } from './sqlite.js';
export { newCachedStorage, type CachedStorageOptions } from './watch-cache.js';
export { startCompactor, type Compactor, type CompactorOptions } from './compactor.js';
