// The main thread's busy time per request from V8 CPU profiles, by kind of code: the answer's `writev`,
// node's own JavaScript, Fastify, the server's own code, other packages, garbage collection and V8 itself;
// each sample goes to the kind of its leaf (self time). One column per profile, so that servers profiled
// under the same load compare kind by kind (the minimum rung against the service, say).
// Usage: node bench/http/profile/profile-kinds.mjs SKIP_S KEEP_S PROFILE:REQUESTS ...
//   (the main thread's .cpuprofile of each server, the requests it answered in the KEEP_S seconds from SKIP_S
//   seconds after its start; profiles as bench/http/profile/profile-parts.mjs's header says)
import { readFileSync } from 'node:fs'
import { windowTimes } from './profile-account.mjs'

const KINDS = [
  ["the answer's writev", (frame) => /^writev |writevGeneric|_writev/.test(frame)],
  ['garbage collection', (frame) => frame.startsWith('(garbage collector)')],
  ['V8 and native code', (frame) => frame.startsWith('(program)')],
  ['Fastify and find-my-way', (frame) => /node_modules\/(fastify|find-my-way|avvio|@fastify)\//.test(frame)],
  ['node:http, streams, events, timers', (frame) => frame.includes('node:')],
  ['other packages', (frame) => frame.includes('node_modules/')],
  ["the server's own code", (frame) => /\/(dist|bench)\//.test(frame)],
  ['generated code and builtins', () => true],
]

const [skipS, keepS, ...runs] = process.argv.slice(2)
const columns = runs.map((run) => {
  const [file, requests] = [run.slice(0, run.lastIndexOf(':')), Number(run.slice(run.lastIndexOf(':') + 1))]
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const frameOf = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const times = KINDS.map(() => 0)
  for (const [id, dt] of windowTimes(profile, Number(skipS), Number(keepS))) {
    const frame = frameOf.get(id)
    if (frame.functionName === '(idle)') continue
    const name = `${frame.functionName} ${frame.url}`
    times[KINDS.findIndex(([, matches]) => matches(name))] += dt
  }
  return times.map((time) => time / requests)
})
console.log(`| kind | ${runs.map((_, i) => `profile ${i + 1}`).join(' | ')} |`)
console.log(`|---|${runs.map(() => '---|').join('')}`)
for (const [k, [kind]] of KINDS.entries()) {
  console.log(`| ${kind} | ${columns.map((c) => c[k].toFixed(1)).join(' | ')} |`)
}
const busy = columns.map((c) => c.reduce((a, b) => a + b, 0).toFixed(1))
console.log(`| **busy in all** | ${busy.map((b) => `**${b}**`).join(' | ')} |`)
