// ALGOSERVE_ALGORITHMS at start: files, folders and package names load; each way a module can break the
// contract stops the start with an error naming the file and what is wrong.
import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { moduleFiles } from '../../src/algorithms/loader.js'
import { loadRegistry } from '../../src/algorithms/registry.js'
import { ConfigError } from '../../src/errors.js'
import { moduleSource, validMembers, writeModules } from '../helpers/algorithms.js'
import { startApp } from '../helpers/app.js'

const good = moduleSource(validMembers('Adder'))
/** The valid module with one member replaced (or, with `undefined`, removed). */
const withMember = (name: string, value: string | undefined) =>
  moduleSource(
    validMembers('Adder')
      .split('\n')
      .filter((line) => !line.trimStart().startsWith(`${name}:`) || value !== undefined)
      .map((line) => (line.trimStart().startsWith(`${name}:`) ? `  ${name}: ${value},` : line))
      .join('\n'),
  )

const broken: [string, string, RegExp][] = [
  ['no default export', 'export const x = 1\n', /its default export must be an object/],
  ['a default export that is a function', 'export default () => 1\n', /default export must be an object/],
  ['no name', withMember('name', undefined), /'name' must be 1 to 64 letters/],
  ['a name with a space', withMember('name', "'Add er'"), /'name' must be 1 to 64 letters/],
  ['a version that is not semver', withMember('version', "'1.0'"), /'version' must be a semantic version/],
  ['no description', withMember('description', undefined), /'description' must be a string/],
  ['no run', withMember('run', undefined), /'run' must be a function/],
  [
    'params that are no object schema',
    withMember('params', "{ type: 'integer' }"),
    /'params' must be a JSON Schema of an object/,
  ],
  [
    'params whose root refers to a schema of no object',
    withMember('params', "{ $ref: '#/$defs/N', $defs: { N: { type: 'integer' } } }"),
    /'params' must be a JSON Schema of an object/,
  ],
  ['a result that is no schema', withMember('result', "'integer'"), /'result' must be a JSON Schema/],
  [
    'a params schema that refers to another file',
    withMember(
      'params',
      "{ type: 'object', properties: { a: { $ref: 'http://json-schema.org/draft-07/schema#' } } }",
    ),
    /its 'params' schema cannot be shown in the API docs: \$ref 'http:\/\/json-schema.org\/draft-07\/schema#' names no part of the schema/,
  ],
  [
    'a params schema that does not compile',
    withMember('params', "{ type: 'object', properties: { a: { type: 'integr' } } }"),
    /its 'params' schema does not compile: schema is invalid: data\/properties\/a\/type/,
  ],
  [
    'a result schema with an unknown keyword',
    withMember('result', "{ type: 'object', requird: ['sum'] }"),
    /its 'result' schema does not compile: .*requird/,
  ],
  [
    'a format no one knows',
    withMember('params', "{ type: 'object', properties: { a: { type: 'string', format: 'nope' } } }"),
    /its 'params' schema does not compile: unknown format "nope"/,
  ],
  [
    'an example that fails the params schema',
    withMember('examples', '[{ params: { a: 1 } }]'),
    /examples\[0\]\.params fail the params schema: b: must have required property 'b'/,
  ],
  [
    'a timeoutMs that is not a whole number',
    withMember('run', '() => 1, timeoutMs: 1.5'),
    /'timeoutMs' must be a whole number/,
  ],
  [
    'a concurrency of none',
    withMember('run', '() => 1, concurrency: 0'),
    /'concurrency' must be a whole number of jobs running at once, at least 1/,
  ],
  [
    'a maxJsonValues of none',
    withMember('run', '() => 1, maxJsonValues: 0'),
    /'maxJsonValues' must be a whole number, at least 1/,
  ],
  [
    'a maxBodyBytes that is not a whole number',
    withMember('run', "() => 1, maxBodyBytes: '1MB'"),
    /'maxBodyBytes' must be a whole number, at least 1/,
  ],
  [
    'a concurrency that is not a number',
    withMember('run', "() => 1, concurrency: '2'"),
    /'concurrency' must be a whole number/,
  ],
  ['an unknown member', withMember('run', '() => 1, timeout: 100'), /unknown member 'timeout'/],
  [
    'a module that throws while loading',
    "throw new Error('bad import')\n",
    /could not be loaded: bad import/,
  ],
  ['a syntax error', 'export default {\n', /could not be loaded/],
]

const folder = writeModules({
  'good.mjs': good,
  'other.js': moduleSource(validMembers('Other')),
  'notes.txt': 'not a module',
  ...Object.fromEntries(broken.map(([, source], i) => [`broken-${i}.mjs`, source])),
  'duplicate.mjs': moduleSource(validMembers('Adder')),
  'prime.mjs': moduleSource(validMembers('PrimeChecker')),
})
after(() => folder.remove())

for (const [what, , message] of broken) {
  const index = broken.findIndex(([w]) => w === what)
  test(`a start with ${what} stops with an error naming the file`, async () => {
    const file = folder.file(`broken-${index}.mjs`)
    await assert.rejects(startApp({ algorithms: [file] }), (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error))
      assert.ok(error.message.includes(file), `${error.message} names ${file}`)
      assert.match(error.message, message)
      return true
    })
  })
}

test('a name taken twice, or the name of a built-in algorithm, stops the start naming both files', async () => {
  await assert.rejects(
    loadRegistry(moduleFiles([folder.file('good.mjs'), folder.file('duplicate.mjs')])),
    new RegExp(
      `${folder.file('duplicate.mjs')}: the name 'Adder' is taken already by ${folder.file('good.mjs')}`,
    ),
  )
  await assert.rejects(
    loadRegistry(moduleFiles([folder.file('prime.mjs')])),
    /prime\.mjs: the name 'PrimeChecker' is taken already by built-in module PrimeChecker/,
  )
})

test("JSON Schema's formats and OpenAPI's number formats are known", async () => {
  const formats = writeModules({
    'formats.mjs': withMember(
      'params',
      "{ type: 'object', properties: { a: { type: 'integer', format: 'int64' }, d: { type: 'string', format: 'date-time' } } }",
    ),
  })
  try {
    const registry = await loadRegistry([formats.file('formats.mjs')])
    assert.deepEqual(registry.defaultOf('Adder')?.checkParams({ a: 1, d: '2026-11-26T00:00:00Z' }), [])
    assert.equal(registry.defaultOf('Adder')?.checkParams({ a: 1, d: 'yesterday' }).length, 1)
  } finally {
    formats.remove()
  }
})

test('a path that does not exist, an empty folder and an unknown package stop the start', () => {
  assert.throws(() => moduleFiles(['./no/such/file.mjs']), /no\/such\/file\.mjs does not exist/)
  const empty = join(folder.dir, 'empty')
  mkdirSync(empty)
  assert.throws(() => moduleFiles([empty]), /has no \.js or \.mjs module/)
  assert.throws(
    () => moduleFiles(['no-such-package-at-all'], folder.dir),
    /neither a file, a folder nor a package/,
  )
})

test('a folder gives its .js and .mjs files, sorted; a package name its entry file', () => {
  const only = writeModules({ 'b.mjs': good, 'a.js': good, 'c.txt': '' })
  const pkg = join(folder.dir, 'node_modules', 'algoserve-adder')
  mkdirSync(pkg, { recursive: true })
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'algoserve-adder', main: 'adder.mjs' }))
  writeFileSync(join(pkg, 'adder.mjs'), good)
  try {
    assert.deepEqual(moduleFiles([only.dir]), [only.file('a.js'), only.file('b.mjs')])
    assert.deepEqual(moduleFiles(['algoserve-adder'], folder.dir), [join(pkg, 'adder.mjs')])
  } finally {
    only.remove()
  }
})

test('modules load in the process and once in each worker thread, from a file, a folder or a package', async () => {
  const modules = writeModules({
    'where.mjs': `import { threadId } from 'node:worker_threads'
globalThis.whereLoads = (globalThis.whereLoads ?? 0) + 1
export default {
  name: 'Where', version: '0.1.0', description: 'Says which thread ran it.',
  params: { type: 'object' },
  result: { type: 'object', required: ['thread', 'loads'] },
  run: () => ({ thread: threadId, loads: globalThis.whereLoads }),
}
`,
  })
  const server = await startApp({ algorithms: [modules.dir], workerThreads: 2 })
  try {
    const threads = new Set<number>()
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`${server.url}/algorithms/Where/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
      const { result } = (await response.json()) as { result: { thread: number; loads: number } }
      assert.notEqual(result.thread, 0, 'ran on a worker thread')
      assert.equal(result.loads, 1, 'the module was loaded once in that thread')
      threads.add(result.thread)
    }
    assert.equal((globalThis as { whereLoads?: number }).whereLoads, 1, 'and once in the process')
  } finally {
    await server.close()
    modules.remove()
  }
})

test('in a worker thread (checked by the process), the schemas compile at their first use, and the same checks hold', async () => {
  const files = writeModules({
    'adder.mjs': good,
    // Broken only where the process stops the start: a thread given it unchecked loads it.
    'bad-result.mjs': withMember('result', "{ type: 'object', requird: ['sum'] }").replace(
      "name: 'Adder'",
      "name: 'BadResult'",
    ),
  })
  try {
    const registry = await loadRegistry([files.file('adder.mjs'), files.file('bad-result.mjs')], {
      checkedByProcess: true,
    })
    const adder = registry.defaultOf('Adder')
    assert.deepEqual(adder?.checkParams({ a: 1, b: 2 }), [])
    assert.equal(adder?.checkParams({ a: 'one', b: 2 }).length, 1)
    assert.deepEqual(adder?.checkResult({ sum: 3 }), [])
    assert.ok((adder?.checkResult({}).length ?? 0) > 0)
    assert.throws(
      () => registry.defaultOf('BadResult')?.checkResult({}),
      /its 'result' schema does not compile/,
    )
  } finally {
    files.remove()
  }
})
