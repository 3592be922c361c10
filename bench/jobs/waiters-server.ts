// The service for bench/jobs/waiters.ts, in a process of its own so that its RSS and CPU time are its
// alone: jobs are stored but never run (no consumer is started), so a wait on one is held until its
// end. Prints its URL once listening. REDIS_URL and REDIS_PREFIX pick the Redis backend.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultConfig } from '../../src/config.js'
import { createService } from '../../src/service.js'

const service = await createService({
  ...defaultConfig(),
  port: 0,
  dataDir: mkdtempSync(join(tmpdir(), 'algoserve-bench-waiters-')),
  logLevel: 'silent',
  workerThreads: 1,
  maxJobWaiters: 2000,
  redisUrl: process.env.REDIS_URL || null, // empty: the embedded store
  redisPrefix: process.env.REDIS_PREFIX ?? 'algoserve',
})
await service.app.listen({ host: '127.0.0.1', port: 0 })
const { port } = service.app.server.address() as { port: number }
console.log(`http://127.0.0.1:${port}`)
process.on('SIGTERM', () => void service.shutdown(0).then(() => process.exit(0)))
