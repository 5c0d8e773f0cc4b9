export * from './fake-api-server.js';
export * from './testdata.js';
export * from './wait-for.js';
