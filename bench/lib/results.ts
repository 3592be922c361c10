// A script's last run as data, for the TypeScript scripts: one implementation, in results.mjs.

export type { Run, Table } from './results.mjs'
export { commandLine, machine, RESULTS, readResults, writeResult } from './results.mjs'
