// What a program that answers once and exits costs against one that stays: the same echo, in Node.js and
// in Python, as process algorithms of one instance, through ProcessPool.run one call after another.
// Rounds alternate between the four; each figure is the median over rounds of each round's p50.
// Usage: npx tsx bench/process/exit-per-call.ts   (CALLS=200 ROUNDS=3)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { loadManifest } from '../../src/algorithms/process-manifest.js'
import { ProcessPool } from '../../src/execution/process-pool.js'
import { writeResultOnExit } from '../lib/markdown-results.js'
import { upperMedian } from '../lib/stats.js'

writeResultOnExit(
  'exit-per-call',
  {
    title: 'a process algorithm that exits after each answer against one that stays',
    script: 'bench/process/exit-per-call.ts',
    history: 'docs/benchmarks/algorithms.md',
    command: 'npx tsx bench/process/exit-per-call.ts',
  },
  ['CALLS', 'ROUNDS'],
)

const CALLS = Number(process.env.CALLS ?? 200)
const ROUNDS = Number(process.env.ROUNDS ?? 3)

const work = mkdtempSync(join(tmpdir(), 'algoserve-exit-per-call-'))
const PROGRAMS: Record<string, [string, string]> = {
  'echo.mjs': [
    process.execPath,
    [
      "import { createInterface } from 'node:readline'",
      'const once = process.argv[2] === "once"',
      "const lines = createInterface({ input: process.stdin }).on('line', (line) => {",
      '  const { id, params } = JSON.parse(line)',
      '  process.stdout.write(JSON.stringify({ id, result: params }) + "\\n")',
      '  if (once) { lines.close(); process.stdin.destroy() }',
      '})',
      '',
    ].join('\n'),
  ],
  'echo.py': [
    'python3',
    [
      'import json',
      'import sys',
      'for line in sys.stdin:',
      '    request = json.loads(line)',
      '    sys.stdout.write(json.dumps({"id": request["id"], "result": request["params"]}) + "\\n")',
      '    sys.stdout.flush()',
      '    if sys.argv[1:] == ["once"]:',
      '        break',
      '',
    ].join('\n'),
  ],
}
const log = pino({ level: 'warn' }) as unknown as FastifyBaseLogger
const pools = new Map<string, ProcessPool>()
for (const [file, [runtime, source]] of Object.entries(PROGRAMS)) {
  writeFileSync(join(work, file), source)
  for (const style of ['stays', 'once']) {
    const manifest = join(work, `${file}-${style}.json`)
    writeFileSync(
      manifest,
      JSON.stringify({
        name: `Echo${style}`,
        version: '1.0.0',
        description: 'Echo.',
        params: { type: 'object' },
        result: { type: 'object' },
        command: [runtime, join(work, file), ...(style === 'once' ? ['once'] : [])],
      }),
    )
    const pool = new ProcessPool(loadManifest(manifest), { invokeQueueTimeoutMs: 60_000 })
    pool.start(log)
    pools.set(`${file} ${style}`, pool)
  }
}

const call = (pool: ProcessPool) => pool.run({ text: 'hello' }, { lane: 'job', timeoutMs: 30_000 })
for (const pool of pools.values()) for (let i = 0; i < 20; i++) await call(pool)

const p50s = new Map([...pools.keys()].map((name) => [name, [] as number[]]))
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, pool] of pools) {
    const times: number[] = []
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now()
      await call(pool)
      times.push(performance.now() - start)
    }
    p50s.get(name)?.push(upperMedian(times))
  }
}
await Promise.all([...pools.values()].map((pool) => pool.close()))
rmSync(work, { recursive: true, force: true })

console.log(
  `## An echo that stays against one that exits after each answer: ${CALLS} calls in a row; median of ${ROUNDS} rounds of each round's p50, ms`,
)
console.log()
console.log('| program | stays | answers once and exits | ratio | each round (exits) |')
console.log('|---|---|---|---|---|')
for (const file of Object.keys(PROGRAMS)) {
  const stays = upperMedian(p50s.get(`${file} stays`) ?? [])
  const exits = upperMedian(p50s.get(`${file} once`) ?? [])
  const rounds = (p50s.get(`${file} once`) ?? []).map((ms) => ms.toFixed(1)).join(', ')
  console.log(
    `| ${file} | ${stays.toFixed(3)} | ${exits.toFixed(1)} | ${(exits / stays).toFixed(0)}x | ${rounds} |`,
  )
}
