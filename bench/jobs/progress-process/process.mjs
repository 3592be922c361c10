// The process algorithm of bench/jobs/progress.ts (its algorithm.json says what each mode does).
// Writes to a pipe are synchronous on Linux, so a report costs its real write even in a busy loop.
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)

/** About a millisecond of floating-point work. */
function unit() {
  let x = 0
  for (let i = 1; i < 400_000; i++) x += Math.sqrt(i)
  return x
}

let calls = Promise.resolve()
createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, params } = JSON.parse(line)
  calls = calls.then(async () => {
    if (params.mode === 'tick' && params.every_ms === undefined) {
      await sleep(params.duration_ms)
      send({ id, result: { reports: 0 } })
      return
    }
    if (params.mode === 'tick') {
      const end = Date.now() + params.duration_ms
      let reports = 0
      while (Date.now() < end) {
        await sleep(params.every_ms)
        send({ id, progress: 1 - (end - Date.now()) / params.duration_ms, message: String(Date.now()) })
        reports++
      }
      send({ id, result: { reports } })
      return
    }
    const start = performance.now()
    let sum = 0
    for (let u = 1; u <= params.units; u++) {
      sum += unit()
      if (params.report) send({ id, progress: u / params.units, message: `unit ${u} of ${params.units}` })
    }
    send({ id, result: { ms: performance.now() - start, sum } })
  })
})
