export * from './fake-lister-watcher.js';
