// The Dockerfile, without Docker (it cannot run here): its build stage's RUN steps run as written in a
// copy of the build context, its final stage is assembled from the COPY --from=build lines, and its CMD
// and HEALTHCHECK run as written: the service starts, answers, is healthy, and stops on SIGTERM.
// What this does not do: start from an empty node_modules (the copy is seeded with this checkout's, as
// a Docker layer cache would be), use the node:20 images, or run as the `node` user.
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { basename, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { until } from '../helpers/time.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// Beside node_modules, on the same file system, so that it can be seeded with hard links.
const WORK = join(ROOT, 'node_modules/.cache/algoserve-dockerfile')
const run = promisify(execFile)

interface Stage {
  from: string
  instructions: [string, string][]
}

/** The Dockerfile as stages of [instruction, arguments], continuation lines joined. */
function readDockerfile(): Stage[] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ')
  const stages: Stage[] = []
  for (const line of text.split('\n')) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim())
    if (match === null || line.trim().startsWith('#')) continue
    const [, instruction, args] = match as unknown as [string, string, string]
    if (instruction === 'FROM') stages.push({ from: args, instructions: [] })
    else stages.at(-1)?.instructions.push([instruction, args.trim()])
  }
  return stages
}

const [build, final] = readDockerfile()
const all = (stage: Stage | undefined, instruction: string) =>
  (stage?.instructions ?? []).filter(([name]) => name === instruction).map(([, args]) => args)

test('two stages; the last runs as a non-root user, in exec form, with a health check', () => {
  assert.match(build?.from ?? '', /^node:20-bookworm AS build$/)
  assert.match(final?.from ?? '', /^node:20-bookworm-slim$/)
  assert.deepEqual(all(final, 'USER'), ['node'])
  const [cmd] = all(final, 'CMD')
  assert.deepEqual(JSON.parse(cmd ?? ''), ['node', '--max-semi-space-size=1', 'dist/main.js', 'serve'])
  assert.equal(all(final, 'HEALTHCHECK').length, 1)
  assert.ok(!all(final, 'RUN').some((step) => step.includes('npm')), 'no npm in the final stage')
})

let service: ChildProcess | undefined
before(() => {
  rmSync(WORK, { recursive: true, force: true })
  mkdirSync(join(WORK, 'build'), { recursive: true })
  mkdirSync(join(WORK, 'final'), { recursive: true })
})
after(() => {
  service?.kill('SIGKILL')
  rmSync(WORK, { recursive: true, force: true })
})

const freePort = async (): Promise<number> => {
  const server = createServer().listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  return port
}

test('the build steps, the start command and the health check work as written', {
  timeout: 600_000,
}, async (t) => {
  const context = join(WORK, 'build')
  // A layer cache: this checkout's node_modules, hard-linked; npm's own record of it copied, since npm
  // rewrites that file in place.
  mkdirSync(join(context, 'node_modules'))
  const entries = readdirSync(join(ROOT, 'node_modules')).filter(
    (name) => name !== '.cache' && name !== '.package-lock.json',
  )
  await run('cp', [
    '-al',
    ...entries.map((name) => join(ROOT, 'node_modules', name)),
    join(context, 'node_modules'),
  ])
  cpSync(join(ROOT, 'node_modules/.package-lock.json'), join(context, 'node_modules/.package-lock.json'))

  for (const [instruction, args] of build?.instructions ?? []) {
    if (instruction === 'WORKDIR') continue
    if (instruction === 'COPY') {
      const parts = args.split(/\s+/)
      const target = join(context, parts.at(-1) as string)
      for (const source of parts.slice(0, -1)) {
        const dest = parts.length > 2 ? join(target, source) : target
        cpSync(join(ROOT, source), dest, {
          recursive: true,
          // As .dockerignore says: no build output goes in.
          filter: (path) => !path.includes(join('wasm', 'build')),
        })
      }
      continue
    }
    assert.equal(instruction, 'RUN', `unexpected build instruction ${instruction}`)
    t.diagnostic(`RUN ${args}`)
    await run('sh', ['-c', args], { cwd: context, maxBuffer: 64 * 1024 * 1024 })
  }
  assert.ok(!existsSync(join(context, 'node_modules/typescript')), 'the dev dependencies are pruned')
  assert.ok(existsSync(join(context, 'node_modules/fastify')))

  const image = join(WORK, 'final')
  for (const args of all(final, 'COPY')) {
    const [from, source, target] = args.split(/\s+/) as [string, string, string]
    assert.equal(from, '--from=build')
    const path = source.replace(/^\/app\//, '')
    // A target ending in / is a folder the source goes into.
    cpSync(join(context, path), join(image, target, target.endsWith('/') ? basename(path) : ''), {
      recursive: true,
    })
  }

  const env: Record<string, string> = {}
  for (const args of all(final, 'ENV')) {
    for (const [, name, value] of args.matchAll(/(\w+)=(\S+)/g)) env[name as string] = value as string
  }
  assert.equal(env.ALGOSERVE_HOST, '0.0.0.0')
  const port = await freePort()
  const runtimeEnv = {
    ...process.env,
    ...env,
    ALGOSERVE_PORT: String(port),
    ALGOSERVE_DATA_DIR: join(WORK, 'data'),
  }
  const [cmd] = all(final, 'CMD')
  const [program, ...argv] = JSON.parse(cmd ?? '[]') as string[]
  assert.equal(program, 'node')
  service = spawn(process.execPath, argv, { cwd: image, env: runtimeEnv, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  service.stdout?.on('data', (chunk) => {
    output += chunk
  })
  service.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const exited = once(service, 'exit')
  await until(
    () => output.includes('"msg":"ready"'),
    60_000,
    () => `the service did not start:\n${output}`,
  )
  const invoke = await fetch(`http://127.0.0.1:${port}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"number": 97}',
  })
  assert.equal(invoke.status, 200)

  const [healthcheck] = all(final, 'HEALTHCHECK')
  const check = JSON.parse(/CMD (\[.*\])$/.exec(healthcheck ?? '')?.[1] ?? '[]') as string[]
  assert.equal(check[0], 'node')
  await run(process.execPath, check.slice(1), { env: runtimeEnv })

  service.kill('SIGTERM')
  const [code] = await exited
  assert.equal(code, 0, output)
  assert.match(output, /shutdown complete/)
  // And the health check then fails, as it must for a stopped service.
  await assert.rejects(run(process.execPath, check.slice(1), { env: runtimeEnv }))
})
