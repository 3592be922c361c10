// The service for bench/jobs/events.ts, in a process of its own so that its RSS is its alone: the
// algorithm of bench/jobs/progress-process, four jobs at once. Prints its URL once listening.
// REDIS_URL and REDIS_PREFIX pick the Redis backend.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defaultConfig } from '../../src/config.js'
import { createService } from '../../src/service.js'

const service = await createService({
  ...defaultConfig(),
  port: 0,
  dataDir: mkdtempSync(join(tmpdir(), 'algoserve-bench-events-')),
  logLevel: 'silent',
  algorithms: [fileURLToPath(new URL('./progress-process', import.meta.url))],
  workerThreads: 1,
  jobConcurrency: 4,
  maxEventStreams: 5000,
  redisUrl: process.env.REDIS_URL || null,
  redisPrefix: process.env.REDIS_PREFIX ?? 'algoserve',
  runJobs: true,
})
await service.app.listen({ host: '127.0.0.1', port: 0 })
service.start()
const { port } = service.app.server.address() as { port: number }
console.log(`http://127.0.0.1:${port}`)
process.on('SIGTERM', () => void service.shutdown(0).then(() => process.exit(0)))
