// Process algorithms at start: a folder with an algorithm.json loads as one, alone or among modules in a
// listed folder; each way an algorithm.json can be wrong stops the start with an error naming the file.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { moduleFiles } from '../../src/algorithms/loader.js'
import { loadManifest } from '../../src/algorithms/process-manifest.js'
import { loadRegistry } from '../../src/algorithms/registry.js'
import { ConfigError } from '../../src/errors.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'

const valid = {
  name: 'Shout',
  version: '1.0.0',
  description: 'Upper case.',
  params: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
  result: { type: 'object' },
  examples: [{ params: { text: 'hi' } }],
  timeoutMs: 2000,
  command: ['python3', 'shout.py'],
}

const folder = writeModules({ 'adder.mjs': moduleSource(validMembers('Adder')) })
after(() => folder.remove())

/** Writes an algorithm.json with these members into a fresh subfolder; its path. */
let written = 0
function manifest(members: unknown): string {
  const dir = join(folder.dir, 'manifests', String(written++))
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'algorithm.json')
  writeFileSync(file, typeof members === 'string' ? members : JSON.stringify(members))
  return file
}

test('an algorithm.json: its members as a module gives them, its command, folder and instances', () => {
  const file = manifest({ ...valid, instances: 3, concurrency: 2 })
  const algorithm = loadManifest(file)
  assert.equal(algorithm.name, 'Shout')
  assert.equal(algorithm.timeoutMs, 2000)
  assert.equal(algorithm.concurrency, 2)
  assert.equal(algorithm.source, file)
  assert.deepEqual(algorithm.process, {
    command: ['python3', 'shout.py'],
    cwd: join(file, '..'),
    instances: 3,
  })
  assert.deepEqual(algorithm.checkParams({ text: 'a' }), [])
  assert.equal(algorithm.checkParams({}).length, 1)
  assert.equal(loadManifest(manifest(valid)).process?.instances, 1)
  assert.equal(loadManifest(manifest(valid)).concurrency, null)
})

const broken: [string, unknown, RegExp][] = [
  ['text that is not JSON', '{ "name": ', /it could not be read as JSON/],
  ['an array', '[]', /it must hold an object/],
  ['no command', { ...valid, command: undefined }, /'command' must be an array of non-empty strings/],
  ['an empty command', { ...valid, command: [] }, /'command' must be an array/],
  ['a command as one string', { ...valid, command: 'python3 shout.py' }, /'command' must be an array/],
  ['no instances', { ...valid, instances: 0 }, /'instances' must be a whole number from 1 to 64/],
  ['instances that are not whole', { ...valid, instances: 1.5 }, /'instances' must be a whole number/],
  ['a run', { ...valid, run: 'x' }, /unknown member 'run'/],
  ['a concurrency that is not whole', { ...valid, concurrency: 1.5 }, /'concurrency' must be a whole number/],
  ['an unknown member', { ...valid, procs: 2 }, /unknown member 'procs'/],
  ['a bad name', { ...valid, name: 'sh out' }, /'name' must be 1 to 64 letters/],
  ['a bad version', { ...valid, version: '1' }, /'version' must be a semantic version/],
  [
    'a params schema that does not compile',
    { ...valid, params: { type: 'object', properties: { a: { type: 'strin' } } } },
    /its 'params' schema does not compile/,
  ],
  [
    'an example that fails the params',
    { ...valid, examples: [{ params: {} }] },
    /examples\[0\]\.params fail/,
  ],
]

for (const [what, members, problem] of broken) {
  test(`${what}: a start error naming the file`, () => {
    const file = manifest(members)
    assert.throws(
      () => loadManifest(file),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes(file) && problem.test(error.message),
    )
  })
}

test('a listed folder with an algorithm.json is that algorithm; a folder of folders and modules loads each', async () => {
  const parent = writeModules({ 'adder.mjs': moduleSource(validMembers('Adder')) })
  after(() => parent.remove())
  for (const name of ['shout', 'whisper']) {
    mkdirSync(join(parent.dir, name))
    writeFileSync(join(parent.dir, name, 'algorithm.json'), JSON.stringify({ ...valid, name }))
  }
  // A folder without an algorithm.json is not an algorithm: left alone.
  mkdirSync(join(parent.dir, 'notes'))
  assert.deepEqual(moduleFiles([join(parent.dir, 'shout')]), [join(parent.dir, 'shout', 'algorithm.json')])
  const files = moduleFiles([parent.dir])
  assert.deepEqual(files, [
    join(parent.dir, 'adder.mjs'),
    join(parent.dir, 'shout', 'algorithm.json'),
    join(parent.dir, 'whisper', 'algorithm.json'),
  ])
  const registry = await loadRegistry(files)
  assert.deepEqual(registry.names(), ['Adder', 'PrimeChecker', 'shout', 'whisper'])
  assert.equal(registry.defaultOf('Adder')?.process, undefined)
  assert.deepEqual(registry.defaultOf('whisper')?.process?.command, valid.command)
})

test('a process algorithm whose name a module has taken already stops the start', async () => {
  const file = manifest({ ...valid, name: 'Adder' })
  await assert.rejects(loadRegistry([folder.file('adder.mjs'), file]), /the name 'Adder' is taken already/)
})
