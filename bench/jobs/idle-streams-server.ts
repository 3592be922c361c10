// The service for bench/jobs/idle-streams.ts, from the checkout CHECKOUT (default: this one), in a
// process of its own so that its RSS is its alone, with the algorithm of test/fixtures/big-result. Prints
// its URL once listening.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type * as ConfigModule from '../../src/config.js'
import type * as ServiceModule from '../../src/service.js'

const checkout = resolve(process.env.CHECKOUT || fileURLToPath(new URL('../..', import.meta.url)))
const from = <Module>(path: string) => import(pathToFileURL(join(checkout, path)).href) as Promise<Module>
const { defaultConfig } = await from<typeof ConfigModule>('src/config.ts')
const { createService } = await from<typeof ServiceModule>('src/service.ts')

const service = await createService({
  ...defaultConfig(),
  port: 0,
  dataDir: mkdtempSync(join(tmpdir(), 'algoserve-bench-idle-streams-')),
  logLevel: 'silent',
  algorithms: [fileURLToPath(new URL('../../test/fixtures/big-result', import.meta.url))],
  workerThreads: 1,
  runJobs: true,
})
await service.app.listen({ host: '127.0.0.1', port: 0 })
service.start()
const { port } = service.app.server.address() as { port: number }
console.log(`http://127.0.0.1:${port}`)
process.on('SIGTERM', () => void service.shutdown(0).then(() => process.exit(0)))
