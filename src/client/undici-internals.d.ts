// Types for the two files of undici that src/client/undici.ts imports directly (undici types only its index).
declare module 'undici/lib/dispatcher/agent.js' {
  const Agent: typeof import('undici').Agent;
  export default Agent;
}
declare module 'undici/lib/api/api-request.js' {
  /** undici's request, called with the dispatcher as `this` and origin, path and method already split (Dispatcher.request). */
  function request(this: import('undici').Dispatcher, opts: import('undici').Dispatcher.RequestOptions): Promise<import('undici').Dispatcher.ResponseData>;
  export default request;
}
