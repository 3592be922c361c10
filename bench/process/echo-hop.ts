// The hop to a process algorithm against the hop to a worker thread, without HTTP: an echo as a module
// (the executor's worker threads, as every user module) and as process algorithms (the Bash example with
// its two instances, and a Python echo with two written here), through Executor.run in the same process.
// Rounds alternate between them. Latency: CALLS calls one after another, p50 and p90 of each; "added" is
// the process's p50 minus the module's. Throughput: CALLS calls at once, calls per second.
// Usage: npx tsx bench/process/echo-hop.ts   (CALLS=3000 ROUNDS=3)
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { moduleFiles } from '../../src/algorithms/loader.js'
import { loadRegistry } from '../../src/algorithms/registry.js'
import { Executor } from '../../src/execution/executor.js'
import { ProcessPoolSet } from '../../src/execution/process-pool.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { median, percentile } from '../lib/stats.js'

writeResultOnExit(
  'echo-hop',
  {
    title: 'an echo through Executor.run: process algorithms against a module',
    script: 'bench/process/echo-hop.ts',
    history: 'docs/benchmarks/algorithms.md',
    command: 'npx tsx bench/process/echo-hop.ts',
  },
  ['CALLS', 'ROUNDS'],
)

const CALLS = Number(process.env.CALLS ?? 3000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const PARAMS = { text: 'hello', n: 12345 }
const SCHEMAS = {
  params: { type: 'object', additionalProperties: true, properties: { text: { type: 'string' } } },
  result: { type: 'object' },
}

const work = mkdtempSync(join(tmpdir(), 'algoserve-echo-hop-'))
writeFileSync(
  join(work, 'echo-module.mjs'),
  `export default { name: 'EchoModule', version: '1.0.0', description: 'Echo.', ...${JSON.stringify(SCHEMAS)}, run: (params) => params }\n`,
)
const python = join(work, 'python-echo')
mkdirSync(python)
writeFileSync(
  join(python, 'algorithm.json'),
  JSON.stringify({
    name: 'PythonEcho',
    version: '1.0.0',
    description: 'Echo.',
    ...SCHEMAS,
    command: ['python3', 'echo.py'],
    instances: 2,
  }),
)
writeFileSync(
  join(python, 'echo.py'),
  [
    'import json',
    'import sys',
    'for line in sys.stdin:',
    '    request = json.loads(line)',
    '    sys.stdout.write(json.dumps({"id": request["id"], "result": request["params"]}) + "\\n")',
    '    sys.stdout.flush()',
    '',
  ].join('\n'),
)

const files = moduleFiles([
  fileURLToPath(new URL('../../examples/algorithms/echo-bash', import.meta.url)),
  join(work, 'echo-module.mjs'),
  python,
])
const registry = await loadRegistry(files)
const processes = new ProcessPoolSet(registry, { invokeQueueTimeoutMs: 60_000 })
const executor = new Executor({ threads: 2, algorithmFiles: files, processes }, createMetrics())
processes.start(pino({ level: 'warn' }) as unknown as FastifyBaseLogger)

const names = ['EchoModule', 'Echo', 'PythonEcho']
const algorithms = names.map((name) => registry.defaultOf(name) as Algorithm)
const call = (algorithm: Algorithm) => executor.run(algorithm, PARAMS, { budgetMs: 1000, timeoutMs: 30_000 })
// Warm: threads loaded, processes up, code paths compiled.
for (const algorithm of algorithms) for (let i = 0; i < 500; i++) await call(algorithm)

const seen = new Map(
  names.map((name) => [name, { p50: [] as number[], p90: [] as number[], rate: [] as number[] }]),
)
for (let round = 0; round < ROUNDS; round++) {
  for (const algorithm of algorithms) {
    const times: number[] = []
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now()
      await call(algorithm)
      times.push(performance.now() - start)
    }
    const start = performance.now()
    await Promise.all(Array.from({ length: CALLS }, () => call(algorithm)))
    const rate = CALLS / ((performance.now() - start) / 1000)
    const figures = seen.get(algorithm.name)
    figures?.p50.push(percentile(times, 0.5))
    figures?.p90.push(percentile(times, 0.9))
    figures?.rate.push(rate)
  }
}
await executor.close()
rmSync(work, { recursive: true, force: true })

const moduleP50 = median(seen.get('EchoModule')?.p50 ?? [])
console.log(
  `## Executor.run of an echo: ${CALLS} calls one after another, then ${CALLS} at once; median of ${ROUNDS} rounds`,
)
console.log()
console.log('| algorithm | p50 ms | p90 ms | added p50 ms | calls/s at once | each round (calls/s) |')
console.log('|---|---|---|---|---|---|')
for (const name of names) {
  const figures = seen.get(name)
  if (figures === undefined) continue
  const p50 = median(figures.p50)
  console.log(
    `| ${name} | ${p50.toFixed(3)} | ${median(figures.p90).toFixed(3)} | ${(p50 - moduleP50 >= 0 ? '+' : '') + (p50 - moduleP50).toFixed(3)} | ${median(figures.rate).toFixed(0)} | ${figures.rate.map((rate) => rate.toFixed(0)).join(' ')} |`,
  )
}
