// `algoserve run` as an author tries an algorithm: a child process of the command line, one call of a
// module or a program with --params or key=value pairs, the result's JSON on stdout with every digit,
// progress and the time on stderr, and the algorithm's refusal of its params as exit 1 in its words.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { after, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { parse } from 'lossless-json'
import { moduleSource, writeModules } from '../helpers/algorithms.js'
import { cli } from '../helpers/cli.js'

const path = (relative: string) => fileURLToPath(new URL(`../../${relative}`, import.meta.url))
const COLLATZ = path('examples/algorithms/collatz.mjs')
const FIBONACCI = path('examples/algorithms/fibonacci-python')
const REJECTS = path('test/fixtures/misbehaving/rejects-input.mjs')
const REJECTS_PROGRAM = path('test/fixtures/misbehaving/rejects-input-js')

/** False when `program --version` runs; otherwise why the test is skipped. */
function missing(program: string): string | false {
  try {
    execFileSync(program, ['--version'], { stdio: 'ignore', timeout: 10_000 })
    return false
  } catch {
    return `${program} is not installed`
  }
}

// What it was given, as it reached `run` (a BigInt shown as `<digits>n`), and a failure on demand.
const modules = writeModules({
  'shows.mjs': moduleSource(`
  name: 'Shows',
  version: '0.1.0',
  description: 'Answers with what it was given.',
  params: { type: 'object' },
  result: { type: 'object' },
  run: (params) => {
    if (params.fail === true) throw new Error('failing as asked')
    return { given: JSON.stringify(params, (_, v) => (typeof v === 'bigint' ? v + 'n' : v)) }
  },`),
})
after(() => modules.remove())

/** The `given` of Shows's answer, read back. */
const given = (stdout: string) => JSON.parse((JSON.parse(stdout) as { given: string }).given) as unknown

describe('a module', () => {
  test('--params: the result exact on stdout, the time on stderr, exit 0', async () => {
    const { code, stdout, stderr } = await cli(['run', COLLATZ, '--params', '{"n": 18446744073709551617}'])
    assert.equal(code, 0, stderr)
    const result = parse(stdout) as { steps: { value: string }; peak: { value: string } }
    assert.equal(result.peak.value, '55340232221128654852')
    assert.match(stdout, /^\{"steps":\d+,"peak":55340232221128654852\}\n$/)
    assert.match(stderr, /^Collatz@1\.0\.0: [0-9.]+ ms \(the run itself: [0-9.]+ ms\)\n$/)
  })

  test('key=value: JSON when it reads as JSON (big integers intact), else the text', async () => {
    const { code, stdout, stderr } = await cli([
      'run',
      modules.dir,
      'n=123456789012345678901234567890',
      'ok=true',
      'name=Ada',
      'quoted="42"',
      'list=[1,2]',
    ])
    assert.equal(code, 0, stderr)
    assert.deepEqual(given(stdout), {
      n: '123456789012345678901234567890n',
      ok: true,
      name: 'Ada',
      quoted: '42',
      list: [1, 2],
    })
  })

  test('pairs set keys over --params', async () => {
    const { stdout } = await cli(['run', modules.file('shows.mjs'), '--params', '{"a": 1, "b": 2}', 'b=3'])
    assert.deepEqual(given(stdout), { a: 1, b: 3 })
  })

  test("a run that throws: exit 1 with the error's message", async () => {
    const { code, stdout, stderr } = await cli(['run', modules.dir, 'fail=true'])
    assert.equal(code, 1)
    assert.equal(stdout, '')
    assert.equal(stderr, 'algoserve: Shows@0.1.0: the run failed: failing as asked\n')
  })

  test('params that break the params schema: exit 1 naming the member', async () => {
    const { code, stderr } = await cli(['run', COLLATZ, 'n=0'])
    assert.equal(code, 1)
    assert.equal(
      stderr,
      'algoserve: Collatz@1.0.0: invalid params: params.n: Input should be greater than or equal to 1\n',
    )
  })

  test("an InvalidParamsError: exit 1 with the algorithm's message and field", async () => {
    const { code, stdout, stderr } = await cli(['run', REJECTS, 'n=-3'])
    assert.equal(code, 1)
    assert.equal(stdout, '')
    assert.equal(
      stderr,
      'algoserve: RejectsInput@1.0.0: the algorithm refused its params: n must not be negative, got -3 (field n)\n',
    )
  })
})

describe('a program', () => {
  test('Python: the result exact, its progress on stderr as it comes', {
    skip: missing('python3'),
  }, async () => {
    const { code, stdout, stderr } = await cli(['run', FIBONACCI, 'n=300'])
    assert.equal(code, 0, stderr)
    assert.equal(
      stdout,
      '{"n":300,"value":222232244629420445529739893461909967206666939096499764990979600}\n',
    )
    const lines = stderr.trimEnd().split('\n')
    assert.equal(lines.at(-2), 'progress 100% 300 of 300 steps')
    assert.ok(lines.includes('progress 10% 30 of 300 steps'), stderr)
    assert.match(lines.at(-1) as string, /^Fibonacci@1\.0\.0: [0-9.]+ ms/)
  })

  test("an invalid_params error: exit 1 with the program's message and field", async () => {
    const { code, stderr } = await cli(['run', REJECTS_PROGRAM, '--params', '{"n": -3}'])
    assert.equal(code, 1)
    assert.equal(
      stderr,
      'algoserve: RejectsInputJs@1.0.0: the algorithm refused its params: n must not be negative, got -3 (field n)\n',
    )
  })
})

describe('run, used wrongly', () => {
  test('a path of several algorithms without --algorithm names them; with it, runs that one', async () => {
    const several = await cli(['run', path('examples/algorithms'), 'n=27'])
    assert.equal(several.code, 2)
    assert.equal(
      several.stderr,
      `algoserve: ${path('examples/algorithms')} holds 4 algorithms: choose one with --algorithm (Collatz, Echo, Fibonacci, SlowCount)\n`,
    )
    const one = await cli(['run', path('examples/algorithms'), '--algorithm', 'Collatz', 'n=27'])
    assert.equal(one.code, 0, one.stderr)
    assert.equal(one.stdout, '{"steps":111,"peak":9232}\n')
  })

  test('no path, --params that is not a JSON object, an unknown flag: exit 2', async () => {
    for (const args of [['run'], ['run', COLLATZ, '--params', '[1]'], ['run', COLLATZ, '--url', 'x']]) {
      const { code, stderr } = await cli(args)
      assert.equal(code, 2, args.join(' '))
      assert.match(stderr, /^algoserve: .*\nRun 'algoserve --help'/, args.join(' '))
    }
  })
})
