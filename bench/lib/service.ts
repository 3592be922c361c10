// Starting the service, for the TypeScript scripts: one implementation, in service.mjs, which the scripts run
// with plain node import directly.

export type { StartedService, StartOptions } from './service.mjs'
export { freePort, ROOT, startService, waitReady } from './service.mjs'
