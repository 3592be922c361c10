// The cost of a module's progress to its run: the same fixed work on a worker thread through
// Executor.run, calling context.progress never, 1,000 and 100,000 times a second (with a hook, as a job's
// run has one), and 100,000 times a second without a hook (as an /invoke call). The rates are set from
// the speed of the run without calls, measured first. Rounds alternate between the variants; each
// variant's time is the run's own (elapsed_time), and the figure is the ratio of medians, the run
// without calls over the run with them (1 = as fast, 0.95 = 5% slower).
// Usage: npm run bench:progress   (= npx tsx bench/execution/progress.ts; ROUNDS=11 RUN_MS=1000)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Algorithm } from '../../src/algorithms/algorithm.js'
import { loadModuleFile } from '../../src/algorithms/loader.js'
import { Executor } from '../../src/execution/executor.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { commandLine, writeResult } from '../lib/results.js'
import { median } from '../lib/stats.js'

const ROUNDS = Number(process.env.ROUNDS ?? 11)
const RUN_MS = Number(process.env.RUN_MS ?? 1000)
/** ONE_FUNCTION=1: the steps' loop inside the loop that calls progress, in one function (see below). */
const ONE_FUNCTION = process.env.ONE_FUNCTION === '1'

// A xorshift walk of `blocks` blocks of BLOCK steps, calling progress after every `stride` blocks (never
// when stride is 0), from the loop over the blocks; each block is walked by a function of its own. With
// the steps' loop inside the loop that calls progress, in one function (ONE_FUNCTION=1), V8 (Node 20) ran
// that loop at about half its speed in many runs, with progress and with a call of the module's own alike
// (the variant `own` calls JSON.stringify on the message instead). Each variant also has a module of its
// own, the same text under another name, so that the JIT's feedback of one variant does not shape
// another's code.
const BLOCK = 1000
const work = mkdtempSync(join(tmpdir(), 'algoserve-progress-bench-'))
const walkSource = (name: string) => `export default {
  name: '${name}', version: '1.0.0', description: 'A xorshift walk.',
  params: { type: 'object', properties: { blocks: { type: 'integer' }, stride: { type: 'integer' }, own: { type: 'boolean' } } },
  result: { type: 'object', properties: { x: { type: 'integer' }, length: { type: 'integer' } } },
  run({ blocks, stride, own }, { progress }) {
    let x = 88172645
    let length = 0
    let next = stride > 0 ? stride : blocks + 1
    for (let b = 1; b <= blocks; b++) {
      ${ONE_FUNCTION ? `for (let i = 0; i < ${BLOCK}; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5 }` : 'x = walkBlock(x)'}
      if (b === next) {
        if (own) length += JSON.stringify('block ' + b).length
        else progress(b / blocks, 'block ' + b)
        next += stride
      }
    }
    return { x: x >>> 0, length }
  },
}

function walkBlock(x) {
  for (let i = 0; i < ${BLOCK}; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5 }
  return x
}
`
const files = [0, 1, 2, 3, 4].map((i) => {
  const file = join(work, `walk${i}.mjs`)
  writeFileSync(file, walkSource(`Walk${i}`))
  return file
})
const walks: Algorithm[] = await Promise.all(files.map((file) => loadModuleFile(file)))
const executor = new Executor({ threads: 1, algorithmFiles: files }, createMetrics())
await executor.warm()

let updates = 0
const hook = () => {
  updates++
}
const timed = async (walk: Algorithm, blocks: number, stride: number, followed: boolean, own = false) => {
  const run = await executor.run(
    walk,
    { blocks, stride, own },
    { budgetMs: 1000, ...(followed ? { lane: 'job', progress: hook } : {}) },
  )
  return run.elapsedSeconds
}

// Calibrate: blocks for RUN_MS without calls, after a warm-up that lets the thread's JIT settle.
const base = walks[0] as Algorithm
let blocks = 1000
for (let i = 0; i < 3; i++) await timed(base, blocks, 0, true)
for (;;) {
  const seconds = await timed(base, blocks, 0, true)
  if (seconds * 1000 >= RUN_MS / 4) {
    blocks = Math.round((blocks * RUN_MS) / 1000 / seconds)
    break
  }
  blocks *= 4
}
const perSecond = blocks / (RUN_MS / 1000)
const variants = [
  { name: 'no calls', stride: 0, followed: true },
  { name: '1,000 calls/s, hook', stride: Math.round(perSecond / 1000), followed: true },
  { name: '100,000 calls/s, hook', stride: Math.round(perSecond / 100_000), followed: true },
  { name: '100,000 calls/s, no hook', stride: Math.round(perSecond / 100_000), followed: false },
  {
    name: 'own: 1,000 JSON.stringify/s, no hook',
    stride: Math.round(perSecond / 1000),
    followed: false,
    own: true,
  },
]
const times = variants.map(() => [] as number[])
const delivered = variants.map(() => [] as number[])
for (let round = 0; round < ROUNDS; round++) {
  // Each round starts with another variant, so that none always follows the same one.
  for (let k = 0; k < variants.length; k++) {
    const i = (round + k) % variants.length
    const variant = variants[i] as (typeof variants)[number]
    updates = 0
    times[i]?.push(await timed(walks[i] as Algorithm, blocks, variant.stride, variant.followed, variant.own))
    delivered[i]?.push(updates)
  }
}
await executor.close()
rmSync(work, { recursive: true, force: true })

const baseSeconds = median(times[0] as number[])
console.log(
  `${blocks} blocks of ${BLOCK} steps a run, ${ROUNDS} rounds, Node ${process.versions.node}${ONE_FUNCTION ? ', ONE_FUNCTION=1' : ''}`,
)
const columns = [
  'run',
  'median ms',
  'calls in the run',
  'updates to the hook (median)',
  'speed against no calls',
]
console.log(`| ${columns.join(' | ')} |`)
console.log('|---|---|---|---|---|')
const rows = variants.map((variant, i) => {
  const ms = median(times[i] as number[]) * 1000
  const calls = variant.stride === 0 ? 0 : Math.floor(blocks / variant.stride)
  const ratio = (baseSeconds * 1000) / ms
  const row = [
    variant.name,
    ms.toFixed(1),
    calls,
    median(delivered[i] as number[]),
    i === 0 ? '' : ratio.toFixed(3),
  ]
  console.log(`| ${row.join(' | ')} |`)
  return row
})
writeResult('progress', {
  title: "a module's progress calls",
  script: 'bench/execution/progress.ts',
  npm: 'npm run bench:progress',
  history: 'docs/benchmarks/algorithms.md',
  command: commandLine(['ROUNDS', 'RUN_MS', 'ONE_FUNCTION'], 'npx tsx bench/execution/progress.ts'),
  tables: [{ caption: `${blocks} blocks of ${BLOCK} steps a run, ${ROUNDS} rounds:`, columns, rows }],
  notes: ['Target: a job sending 1,000 progress updates a second runs at least 0.95 as fast as without.'],
})
