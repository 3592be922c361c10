// PARI/GP, the reference the prime benches compare against: one gp process per script.
import { spawnSync } from 'node:child_process'

/** Runs a gp script and returns the lines it printed. */
export function gp(script: string): string[] {
  const out = spawnSync('gp', ['-q', '-f', '-D', 'colors=no', '-D', 'parisizemax=2G'], {
    input: `${script}\nquit\n`,
    maxBuffer: 1 << 28,
  })
  if (out.status !== 0) throw new Error(`gp failed: ${out.stderr}`)
  return out.stdout.toString().trim().split('\n')
}
