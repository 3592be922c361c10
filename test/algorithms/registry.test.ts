import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { loadRegistry, resolveVersion } from '../../src/algorithms/registry.js'
import { AlgorithmNotFoundError, ConfigError } from '../../src/errors.js'
import { minorAt, writeModules } from '../helpers/algorithms.js'

const at = minorAt

const folder = writeModules({
  'sum-1.0.0.mjs': at('Sum', '1.0.0'),
  'sum-1.2.0.mjs': at('Sum', '1.2.0'),
  'sum-1.10.0.mjs': at('Sum', '1.10.0'),
  'sum-2.0.0-rc.1.mjs': at('Sum', '2.0.0-rc.1'),
  'other.mjs': at('Other', '0.3.0'),
  'again.mjs': at('Sum', '1.2.0'),
})
after(() => folder.remove())
const files = ['sum-1.0.0.mjs', 'sum-1.2.0.mjs', 'sum-1.10.0.mjs', 'sum-2.0.0-rc.1.mjs', 'other.mjs'].map(
  folder.file,
)

test('versions of one name load side by side, highest first by semver, each with its own run', async () => {
  const registry = await loadRegistry(files, {}, false)
  assert.deepEqual(registry.names(), ['Other', 'Sum'])
  assert.deepEqual(
    registry.versions('Sum').map((one) => one.version),
    ['2.0.0-rc.1', '1.10.0', '1.2.0', '1.0.0'],
  )
  assert.deepEqual(await registry.exact('Sum', '1.2.0')?.module.run({}, {} as never), { sum: 2 })
  assert.equal(registry.all().length, 5)
})

test('an exact version, a range (highest loaded match) or none (the highest) picks a version', async () => {
  const registry = await loadRegistry(files, {}, false)
  const pick = (wanted?: string) => registry.resolve('Sum', wanted)?.version
  assert.equal(pick(), '2.0.0-rc.1')
  assert.equal(pick('1.2.0'), '1.2.0')
  assert.equal(pick('1.x'), '1.10.0')
  assert.equal(pick('^1.2'), '1.10.0')
  assert.equal(pick('~1.2.0'), '1.2.0')
  assert.equal(pick('1.3.0'), undefined)
  assert.equal(pick('^3'), undefined)
  assert.equal(pick('not a version'), undefined)
  assert.equal(registry.resolve('Nope'), undefined)
})

test('an unknown name, or a version no loaded one matches, is a 404 listing names and versions', async () => {
  const registry = await loadRegistry(files, {}, false)
  assert.throws(
    () => resolveVersion(registry, 'Nope', '1.0.0'),
    (error: unknown) =>
      error instanceof AlgorithmNotFoundError &&
      error.statusCode === 404 &&
      JSON.stringify(error.details) === JSON.stringify({ available_algorithms: ['Other', 'Sum'] }),
  )
  assert.throws(
    () => resolveVersion(registry, 'Sum', '^3'),
    (error: unknown) =>
      error instanceof AlgorithmNotFoundError &&
      error.message === "Algorithm 'Sum' has no loaded version matching '^3'." &&
      JSON.stringify(error.details) ===
        JSON.stringify({
          available_algorithms: ['Other', 'Sum'],
          available_versions: ['2.0.0-rc.1', '1.10.0', '1.2.0', '1.0.0'],
        }),
  )
  assert.equal(resolveVersion(registry, 'Sum', '1.0.0').version, '1.0.0')
})

test('the operator names the default, or splits it between versions by weight', async () => {
  const named = await loadRegistry(files, {}, false, new Map([['Sum', [{ version: '1.2.0', weight: 1 }]]]))
  assert.equal(named.defaultOf('Sum')?.version, '1.2.0')
  assert.equal(named.resolve('Sum')?.version, '1.2.0')
  assert.equal(named.resolve('Other')?.version, '0.3.0')
  const split = new Map([
    [
      'Sum',
      [
        { version: '1.2.0', weight: 90 },
        { version: '1.10.0', weight: 10 },
      ],
    ],
  ])
  const canary = await loadRegistry(files, {}, false, split)
  assert.equal(canary.pickDefault('Sum', 0)?.version, '1.2.0')
  assert.equal(canary.pickDefault('Sum', 0.899)?.version, '1.2.0')
  assert.equal(canary.pickDefault('Sum', 0.9)?.version, '1.10.0')
  assert.equal(canary.pickDefault('Sum', 0.999)?.version, '1.10.0')
  const counts = new Map<string, number>()
  for (let i = 0; i < 10_000; i++) {
    const version = canary.resolve('Sum')?.version as string
    counts.set(version, (counts.get(version) ?? 0) + 1)
  }
  const canaryShare = (counts.get('1.10.0') ?? 0) / 10_000
  assert.ok(canaryShare > 0.07 && canaryShare < 0.13, `canary share ${canaryShare}`)
  await assert.rejects(
    loadRegistry(files, {}, false, new Map([['Sum', [{ version: '9.9.9', weight: 1 }]]])),
    /The default version 9.9.9 of 'Sum' is not loaded; loaded: 2.0.0-rc.1, 1.10.0, 1.2.0, 1.0.0\./,
  )
  await assert.rejects(
    loadRegistry(files, {}, false, new Map([['Gone', [{ version: '1.0.0', weight: 1 }]]])),
    ConfigError,
  )
})

test('the same name and version twice stops the start, naming both files', async () => {
  await assert.rejects(
    loadRegistry([...files, folder.file('again.mjs')], {}, false),
    new RegExp(
      `${folder.file('again.mjs')}: the name 'Sum' is taken already by ${folder.file('sum-1.2.0.mjs')} at the same version, 1.2.0`,
    ),
  )
})

test('a replaced set is seen by every holder of the registry, and its listeners hear it', async () => {
  const registry = await loadRegistry(files.slice(0, 2), {}, false)
  const heard: number[] = []
  registry.onChange((changed) => heard.push(changed.generation))
  assert.equal(registry.generation, 0)
  registry.replaceWith(await loadRegistry(files, {}, false))
  assert.deepEqual(registry.names(), ['Other', 'Sum'])
  assert.equal(registry.resolve('Sum', '1.x')?.version, '1.10.0')
  assert.deepEqual(heard, [1])
})
