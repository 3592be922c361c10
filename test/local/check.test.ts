// `algoserve check` as a team's CI runs it: a child process of the command line over the examples, and
// over algorithms of a test's own that break in each way it looks for, one line per algorithm and the exit
// code saying whether any failed.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { after, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { moduleSource, writeModules } from '../helpers/algorithms.js'
import { cli } from '../helpers/cli.js'

const EXAMPLES = fileURLToPath(new URL('../../examples/algorithms', import.meta.url))

/** False when every program runs (`program --version`); otherwise why the test is skipped. */
function missing(...programs: string[]): string | false {
  for (const program of programs) {
    try {
      execFileSync(program, ['--version'], { stdio: 'ignore', timeout: 10_000 })
    } catch {
      return `${program} is not installed`
    }
  }
  return false
}

/** A module named `name` taking an integer n (at least 1), with `examples` and `run` as JavaScript text. */
const algorithm = (name: string, examples: string, run: string, more = '') =>
  moduleSource(`
  name: '${name}',
  version: '1.2.3',
  description: 'A test of check.',
  params: { type: 'object', required: ['n'], additionalProperties: false, properties: { n: { type: 'integer', minimum: 1 } } },
  result: { type: 'object', required: ['steps'], properties: { steps: { type: 'integer' } } },
  examples: ${examples},
  ${more}
  run: ${run},`)

const modules = writeModules({
  'a-good.mjs': algorithm(
    'Good',
    '[{ params: { n: 2 } }, { params: { n: 18446744073709551617 } }]',
    '({ n }) => ({ steps: 1 })',
  ),
  'bad-example.mjs': algorithm(
    'BadExample',
    '[{ params: { n: 2 } }, { params: { n: 0 } }]',
    '() => ({ steps: 1 })',
  ),
  'bad-result.mjs': algorithm('BadResult', '[{ params: { n: 2 } }]', '() => ({ steps: "many" })'),
  'throws.mjs': algorithm(
    'Throws',
    '[{ params: { n: 1 } }, { params: { n: 7 } }]',
    "({ n }) => { if (n === 7) throw new Error('seven is not handled'); return { steps: 0 } }",
  ),
  'overruns.mjs': algorithm('Overruns', '[{ params: { n: 1 } }]', '() => { for (;;) {} }', 'timeoutMs: 300,'),
  'no-examples.mjs': algorithm('NoExamples', '[]', '() => ({ steps: 0 })'),
})
after(() => modules.remove())

/** The line of stdout that starts with `start`. */
function lineOf(stdout: string, start: string): string {
  const line = stdout.split('\n').find((l) => l.startsWith(start))
  assert.ok(line !== undefined, `no line starts with ${start} in:\n${stdout}`)
  return line
}

describe('check over examples/algorithms', { skip: missing('python3', 'bash') }, () => {
  test('every example passes: one ok line per algorithm, exit 0', async () => {
    const { code, stdout, stderr } = await cli(['check', EXAMPLES])
    assert.equal(code, 0, stdout + stderr)
    const lines = stdout.trimEnd().split('\n')
    assert.deepEqual(
      lines.map((line) => line.split(' ').slice(0, 2).join(' ')),
      ['Collatz@1.0.0 ok', 'Echo@1.0.0 ok', 'Fibonacci@1.0.0 ok', 'SlowCount@1.0.0 ok'],
    )
    for (const line of lines) assert.match(line, /^\S+ ok \(1 example, \d+ ms\)$/)
  })

  test('without paths it checks what ALGOSERVE_ALGORITHMS names', async () => {
    const { code, stdout } = await cli(['check'], {
      ALGOSERVE_ALGORITHMS: `${EXAMPLES}/collatz.mjs, ${EXAMPLES}/fibonacci-python`,
    })
    assert.equal(code, 0)
    assert.deepEqual(
      stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(' ')[0]),
      ['Collatz@1.0.0', 'Fibonacci@1.0.0'],
    )
  })
})

describe('check over algorithms that break', () => {
  let run: Awaited<ReturnType<typeof cli>>
  test('any failure is exit 1, and every algorithm still gets its line', async () => {
    run = await cli(['check', modules.dir])
    assert.equal(run.code, 1, run.stdout + run.stderr)
    assert.equal(run.stdout.trimEnd().split('\n').length, 6, run.stdout)
  })

  test('all examples passing, big integers among them: ok with the count', () => {
    assert.match(lineOf(run.stdout, 'Good@1.2.3 '), /^Good@1\.2\.3 ok \(2 examples, \d+ ms\)$/)
  })

  test('an example that breaks the params schema: the file and the example, in Ajv words', () => {
    const line = lineOf(run.stdout, modules.file('bad-example.mjs'))
    assert.match(line, / FAIL could not load: examples\[1\]\.params fail the params schema: n: must be >= 1/)
  })

  test('a result that breaks the result schema: the example and the path', () => {
    const line = lineOf(run.stdout, 'BadResult@1.2.3 ')
    assert.match(
      line,
      /^BadResult@1\.2\.3 FAIL examples\[0\]: .*breaks its result schema: steps: must be integer/,
    )
  })

  test("a run that throws: the example and the error's own message", () => {
    const line = lineOf(run.stdout, 'Throws@1.2.3 ')
    assert.match(line, /^Throws@1\.2\.3 FAIL examples\[1\]: the run failed: seven is not handled \(\d+ ms\)$/)
  })

  test('a run past its own time limit is stopped there', () => {
    const line = lineOf(run.stdout, 'Overruns@1.2.3 ')
    assert.match(line, /^Overruns@1\.2\.3 FAIL examples\[0\]: .*exceeded its time limit of 0\.3 s/)
  })

  test('a run that fails is exit 1 alone, with no file that failed to load', async () => {
    const { code, stdout } = await cli(['check', modules.file('bad-result.mjs'), modules.file('a-good.mjs')])
    assert.equal(code, 1)
    assert.match(stdout, /^BadResult@1\.2\.3 FAIL .*\nGood@1\.2\.3 ok .*\n$/)
  })

  test('no examples: nothing run, and not a failure', () => {
    assert.equal(
      lineOf(run.stdout, 'NoExamples@1.2.3 '),
      'NoExamples@1.2.3 ok (no examples: nothing was run)',
    )
  })
})

describe('check, used wrongly', () => {
  test('a name taken twice fails as the service would refuse to start', async () => {
    const twice = writeModules({
      'one.mjs': algorithm('Twice', '[]', '() => ({ steps: 0 })'),
      'two.mjs': algorithm('Twice', '[]', '() => ({ steps: 0 })'),
    })
    try {
      const { code, stdout } = await cli(['check', twice.dir])
      assert.equal(code, 1)
      assert.match(stdout, /^algorithms FAIL could not load: .*the name 'Twice' is taken already/)
    } finally {
      twice.remove()
    }
  })

  test('no paths and no ALGOSERVE_ALGORITHMS, a path that does not exist, an unknown flag: exit 2', async () => {
    const none = await cli(['check'])
    assert.equal(none.code, 2)
    assert.match(none.stderr, /^algoserve: check: name the algorithms/)
    const nowhere = await cli(['check', '/nowhere/at/all.mjs'])
    assert.equal(nowhere.code, 2)
    assert.equal(nowhere.stderr, 'algoserve: /nowhere/at/all.mjs does not exist.\n')
    const flag = await cli(['check', EXAMPLES, '--params', '{}'])
    assert.equal(flag.code, 2)
    assert.match(flag.stderr, /^algoserve: check takes no --params/)
  })
})
