// The account of a V8 CPU profile by parts, shared by bench/http/profile/profile-parts.mjs (a small /invoke)
// and bench/http/profile/profile-job-parts.mjs (a job): each sample of the main thread goes to the first part
// whose rule matches a frame of its stack, walked from the leaf up (so the most specific part wins), or to
// `rest`; idle time is left out, garbage collection and V8's own code are parts of their own.
import { readFileSync } from 'node:fs'

/**
 * A frame as the rules see it: `<function> <url, node_modules/ as nm/, dist/ kept>:<line>`; `nameOf` may name
 * an anonymous function (a callback) after its enclosing one.
 */
const frameName = (node, nameOf) =>
  `${node.callFrame.functionName || nameOf(node.callFrame) || '(anon)'} ${node.callFrame.url.replace(/.*node_modules\//, 'nm/').replace(/.*\/dist\//, 'dist/')}:${node.callFrame.lineNumber}`

/**
 * Busy time in µs of each part over the samples from `skipS` seconds after the profile's start, for `keepS`
 * seconds; `rules` are `[part, (frame) => boolean]`, most specific first.
 */
export function accountOf(file, skipS, keepS, rules, rest, nameOf = () => undefined) {
  const profile = JSON.parse(readFileSync(file, 'utf8'))
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const parent = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)
  const timeOf = windowTimes(profile, skipS, keepS)
  let total = 0
  for (const dt of timeOf.values()) total += dt
  const parts = new Map()
  const add = (part, dt) => parts.set(part, (parts.get(part) ?? 0) + dt)
  let idle = 0
  for (const [id, dt] of timeOf) {
    const leaf = byId.get(id).callFrame.functionName
    if (leaf === '(idle)') idle += dt
    else if (leaf === '(garbage collector)') add('garbage collection', dt)
    else if (leaf === '(program)') add('(program): V8/native outside JS', dt)
    else {
      let part = rest
      find: for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
        const frame = frameName(byId.get(cur), nameOf)
        for (const [name, rule] of rules)
          if (rule(frame)) {
            part = name
            break find
          }
      }
      add(part, dt)
    }
  }
  return { windowUs: total, busyUs: total - idle, idleUs: idle, parts }
}

/**
 * The time in µs of each node of a parsed profile as the leaf of its samples (self time), over the samples
 * from `skipS` seconds after the profile's start, for `keepS` seconds; idle time included, under `(idle)`.
 */
export function windowTimes(profile, skipS, keepS) {
  const from = profile.startTime + skipS * 1e6
  const to = from + keepS * 1e6
  const timeOf = new Map()
  let t = profile.startTime
  profile.samples.forEach((id, i) => {
    t += profile.timeDeltas[i]
    if (t < from || t > to) return
    const dt = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i]
    timeOf.set(id, (timeOf.get(id) ?? 0) + dt)
  })
  return timeOf
}

/** Prints an account: the window, then each part's share of the busy time, largest first. */
export function printAccount({ windowUs, busyUs, idleUs, parts }) {
  console.log(
    `window ${(windowUs / 1e6).toFixed(1)} s, busy ${(busyUs / 1e6).toFixed(2)} s, idle ${(idleUs / 1e6).toFixed(2)} s`,
  )
  for (const [part, dt] of [...parts].sort((a, b) => b[1] - a[1]))
    console.log(`${((100 * dt) / busyUs).toFixed(1).padStart(5)}%  ${part}`)
}
