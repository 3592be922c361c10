// The Dockerfile, without Docker (it cannot run here): its build stage's RUN steps run as written in a
// copy of the build context, its final stage is assembled from the COPY --from=build lines, and runs
// on a node of the image's line (24): the API by its CMD and a worker by compose.yaml's command, each
// with the worker threads its Kubernetes manifest's CPU limit gives and within the manifest's memory
// request at idle; the HEALTHCHECK, as written, passes for both and fails once they have stopped.
// What this does not do: start from an empty node_modules (the copy is seeded with this checkout's, as
// a Docker layer cache would be), use the node:24 images themselves, or run as the `node` user.
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { parse, parseAllDocuments } from 'yaml'
import { threadsFor } from '../../src/execution/usable-cpus.js'
import { composeEnvironment } from '../helpers/compose.js'
import { nodeOfLine } from '../helpers/node-line.js'
import { freePort, type RedisServer, skipWithoutRedis, startRedis } from '../helpers/redis.js'
import { until } from '../helpers/time.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MODULES = realpathSync(join(ROOT, 'node_modules'))
// On the file system of node_modules, so that the copy can be seeded with hard links: the temporary
// directory when it is there, else beside node_modules. A folder of its own for each run.
function workFolder(): string {
  if (statSync(tmpdir()).dev === statSync(MODULES).dev)
    return mkdtempSync(join(tmpdir(), 'algoserve-dockerfile-'))
  mkdirSync(join(MODULES, '.cache'), { recursive: true })
  return mkdtempSync(join(MODULES, '.cache', 'algoserve-dockerfile-'))
}
const WORK = workFolder()
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

test('two stages on the current Node.js LTS line; the last runs as a non-root user, in exec form, with a health check', () => {
  assert.match(build?.from ?? '', /^node:24-bookworm AS build$/)
  assert.match(final?.from ?? '', /^node:24-bookworm-slim$/)
  assert.deepEqual(all(final, 'USER'), ['node'])
  const [cmd] = all(final, 'CMD')
  assert.deepEqual(JSON.parse(cmd ?? ''), ['node', '--max-semi-space-size=1', 'dist/main.js', 'serve'])
  assert.equal(all(final, 'HEALTHCHECK').length, 1)
  assert.ok(!all(final, 'RUN').some((step) => step.includes('npm')), 'no npm in the final stage')
})

test('the dependencies are installed from the lock file alone, before any source is copied', () => {
  const steps = build?.instructions.filter(([name]) => name === 'COPY' || name === 'RUN') ?? []
  assert.deepEqual(steps[0], ['COPY', 'package.json package-lock.json ./'])
  assert.match(steps[1]?.[0] === 'RUN' ? steps[1][1] : '', /^npm install /)
  // Then the sources, and only then the build: a change of a source leaves the install's layer be.
  assert.ok(steps.slice(2).some(([name, args]) => name === 'COPY' && args.startsWith('src ')))
})

const services: ChildProcess[] = []
let redis: RedisServer | undefined
before(() => {
  mkdirSync(join(WORK, 'build'), { recursive: true })
  mkdirSync(join(WORK, 'final'), { recursive: true })
})
after(async () => {
  for (const service of services) service.kill('SIGKILL')
  await redis?.close()
  rmSync(WORK, { recursive: true, force: true })
})

type Resources = { requests: Record<string, string>; limits: Record<string, string> }
/** The container of a Kubernetes manifest's Deployment: its resources. */
function podResources(path: string): Resources {
  const deployment = parseAllDocuments(readFileSync(join(ROOT, path), 'utf8'))
    .map(
      (d) =>
        d.toJS() as {
          kind: string
          spec: { template: { spec: { containers: { resources: Resources }[] } } }
        },
    )
    .find((m) => m.kind === 'Deployment')
  const resources = deployment?.spec.template.spec.containers[0]?.resources
  assert.ok(resources, path)
  return resources
}
const cpus = (quantity = '') =>
  quantity.endsWith('m') ? Number(quantity.slice(0, -1)) / 1000 : Number(quantity)
const MEBIBYTES: Record<string, number> = { Mi: 2 ** 20, Gi: 2 ** 30 }
const bytes = (quantity = '') => Number(quantity.slice(0, -2)) * (MEBIBYTES[quantity.slice(-2)] ?? Number.NaN)

/** A process of the image: the node of its line in the assembled image folder; its output kept. */
function startImage(node: string, image: string, argv: string[], env: Record<string, string>) {
  const child = spawn(node, argv, { cwd: image, env, stdio: ['ignore', 'pipe', 'pipe'] })
  services.push(child)
  let output = ''
  child.stdout?.on('data', (chunk) => {
    output += chunk
  })
  child.stderr?.on('data', (chunk) => {
    output += chunk
  })
  const exited = once(child, 'exit')
  return { child, output: () => output, exited }
}

async function residentBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1])
}

test('the build steps, the start commands and the health check work as written, for the API and a worker', {
  timeout: 900_000,
  skip: skipWithoutRedis,
}, async (t) => {
  const context = join(WORK, 'build')
  // A layer cache: this checkout's node_modules, hard-linked; npm's own record of it copied, since npm
  // rewrites that file in place.
  mkdirSync(join(context, 'node_modules'))
  const entries = readdirSync(MODULES).filter((name) => name !== '.cache' && name !== '.package-lock.json')
  await run('cp', ['-al', ...entries.map((name) => join(MODULES, name)), join(context, 'node_modules')])
  cpSync(join(MODULES, '.package-lock.json'), join(context, 'node_modules/.package-lock.json'))

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
  assert.ok(!existsSync(join(context, 'node_modules/better-sqlite3')), 'better-sqlite3 is left out')
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

  const line = Number(/^node:(\d+)-/.exec(final?.from ?? '')?.[1])
  const node = await nodeOfLine(line)
  t.diagnostic(`the image's Node ${line}: ${node}`)
  const imageEnv: Record<string, string> = {}
  for (const args of all(final, 'ENV')) {
    for (const [, name, value] of args.matchAll(/(\w+)=(\S+)/g)) imageEnv[name as string] = value as string
  }
  assert.equal(imageEnv.ALGOSERVE_HOST, '0.0.0.0')
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('ALGOSERVE_')),
  ) as Record<string, string>
  const [healthcheck] = all(final, 'HEALTHCHECK')
  const check = JSON.parse(/CMD (\[.*\])$/.exec(healthcheck ?? '')?.[1] ?? '[]') as string[]
  assert.equal(check[0], 'node')
  const healthy = (env: Record<string, string>) => run(node, check.slice(1), { env })

  // The API, by the image's CMD, with the threads its pod's CPU limit gives.
  const api = podResources('deploy/kubernetes/api.yaml')
  const apiEnv = {
    ...clean,
    ...imageEnv,
    ALGOSERVE_PORT: String(await freePort()),
    ALGOSERVE_WORKER_PORT: String(await freePort()),
    ALGOSERVE_DATA_DIR: join(WORK, 'data'),
    ALGOSERVE_WORKER_THREADS: String(threadsFor(Math.ceil(cpus(api.limits.cpu)))),
  }
  const [cmd] = all(final, 'CMD')
  const [program, ...argv] = JSON.parse(cmd ?? '[]') as string[]
  assert.equal(program, 'node')
  const server = startImage(node, image, argv, apiEnv)
  await until(
    () => server.output().includes('"msg":"ready"'),
    60_000,
    () => `the service did not start:\n${server.output()}`,
  )
  const apiUrl = `http://127.0.0.1:${apiEnv.ALGOSERVE_PORT}`
  const invoke = await fetch(`${apiUrl}/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"number": 18446744073709551617}',
  })
  assert.equal(invoke.status, 200)
  const apiMemory = await residentBytes(apiUrl)
  t.diagnostic(
    `API: ${apiEnv.ALGOSERVE_WORKER_THREADS} threads, ${(apiMemory / 2 ** 20).toFixed(0)} MiB resident`,
  )
  assert.ok(apiMemory < bytes(api.requests.memory), `${apiMemory} bytes, request ${api.requests.memory}`)
  await healthy(apiEnv)

  // A worker, by compose.yaml's command and settings, on a Redis of its own; `docker compose up` run
  // without OTEL_EXPORTER_OTLP_ENDPOINT, so untraced.
  redis = await startRedis()
  const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<string, { command: string[]; environment: Record<string, string> }>
  }
  const workerService = compose.services.worker
  assert.ok(workerService)
  const workerPod = podResources('deploy/kubernetes/worker.yaml')
  const workerEnv = {
    ...clean,
    ...imageEnv,
    ...composeEnvironment(workerService.environment),
    ALGOSERVE_REDIS_URL: redis.url,
    ALGOSERVE_WORKER_PORT: String(await freePort()),
    // Closed: a worker does not listen there.
    ALGOSERVE_PORT: String(await freePort()),
    ALGOSERVE_WORKER_THREADS: String(threadsFor(Math.ceil(cpus(workerPod.limits.cpu)))),
  }
  const [workerProgram, ...workerArgv] = workerService.command
  assert.equal(workerProgram, 'node')
  const worker = startImage(node, image, workerArgv, workerEnv)
  await until(
    () => worker.output().includes('"msg":"ready"'),
    60_000,
    () => `the worker did not start:\n${worker.output()}`,
  )
  const workerUrl = `http://127.0.0.1:${workerEnv.ALGOSERVE_WORKER_PORT}`
  const workerMemory = await residentBytes(workerUrl)
  t.diagnostic(
    `worker: ${workerEnv.ALGOSERVE_WORKER_THREADS} threads, ${(workerMemory / 2 ** 20).toFixed(0)} MiB resident`,
  )
  assert.ok(
    workerMemory < bytes(workerPod.requests.memory),
    `${workerMemory} bytes, request ${workerPod.requests.memory}`,
  )
  await healthy(workerEnv)

  for (const [name, process, env] of [
    ['API', server, apiEnv],
    ['worker', worker, workerEnv],
  ] as const) {
    process.child.kill('SIGTERM')
    const [code] = await process.exited
    assert.equal(code, 0, process.output())
    assert.match(process.output(), /shutdown complete/, name)
    // And the health check then fails, as it must for a stopped service.
    await assert.rejects(healthy(env), name)
  }
})
