// The code blocks of README.md and docs/*.md that claim an output, checked against the real thing. A block
// says how it is checked by an HTML comment on the line right above its fence (docs/contributing.md):
//
//   <!-- check: file NAME -->         the block is the file NAME of its page (a module later blocks load)
//   <!-- check: run -->               a JavaScript program that must end with exit 0; a line `expr // 42`
//                                     asserts that expr is 42; `run continues` goes on from the run before
//   <!-- check: method PARAMS -->     a module's `run(...) {...}` whose `// {json}` comment is its result
//   <!-- check: http [status=N] [shape] [algorithms=A,B] [prime-checker=false] METHOD PATH [BODY] -->
//                                     the block is the response's JSON body
//   <!-- check: shell [algorithms=A,B] -->
//                                     each command followed by `# ` lines is run, and prints those lines
//   <!-- check: webhook BODY -->      the block is the webhook body of a job created with BODY
//
// A block that shows an output and has no marker fails the last test, which lists every block it checked.
// Against a service on port 0 (one per list of algorithms), with a webhook receiver on loopback.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { createInterface } from 'node:readline'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { isLosslessNumber, type LosslessNumber, parse, stringify } from 'lossless-json'
import { startApp, type TestApp } from '../helpers/app.js'
import { type Receiver, startReceiver } from '../helpers/receiver.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MAIN = join(ROOT, 'src/main.ts')
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
]
/** The address the docs show; commands and programs are pointed at the test's service instead. */
const DOCS_URL = 'http://127.0.0.1:8000'
const HOOK_URL = /https:\/\/example\.com\/[\w/]*/g

interface Block {
  page: string
  line: number
  lang: string
  text: string
  marker: string | undefined
}

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n')
  const at = (i: number) => lines[i] ?? ''
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(```+)(\S*)\s*$/.exec(at(i))
    if (!open) continue
    const [, indent = '', fence = '', lang = ''] = open
    let end = i + 1
    while (end < lines.length && at(end).trim() !== fence) end++
    const marker = /^\s*<!-- check: (.*?) -->\s*$/.exec(at(i - 1))?.[1]
    const text = lines
      .slice(i + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
      .join('\n')
    blocks.push({ page, line: i + 1, lang, text, marker })
    i = end
  }
  return blocks
}

const BLOCKS = PAGES.flatMap(blocksOf)

// --- What shows an output -------------------------------------------------------------------------

/** Members of the service's bodies: a JSON block with one at its top is a response, not a config. */
const BODY_MEMBERS = ['request_id', 'job_id', 'detail', 'error', 'status', 'counts', 'attempts', 'algorithms']

/** Why an unmarked block reads as a claim of output, or undefined when it claims none. */
function claimsOutput(block: Block): string | undefined {
  const lines = block.text.split('\n')
  if (lines.some((line) => line.startsWith('$ '))) return 'a `$ ` command with its output'
  for (const line of lines) {
    // `expr // {"a": 1}`, `cmd   # 42`: a trailing comment that gives a value.
    if (/\S.*\s(\/\/|#) (\{|\[|"|-?[0-9])/.test(line)) return `a value in a comment: ${line.trim()}`
  }
  if (['sh', 'bash', 'shell', 'console'].includes(block.lang)) {
    for (let i = 1; i < lines.length; i++) {
      const comment = /^# (.*)/.exec(lines[i] ?? '')?.[1]
      const previous = lines[i - 1] ?? ''
      if (comment === undefined || previous.startsWith('#') || previous.trim() === '') continue
      // Right under a command: output when it starts as a value does or lines up columns.
      if (/^(\{|\[|-?[0-9])/.test(comment) || /\S {2,}\S/.test(comment) || comment.includes('…')) {
        return `output under a command: ${comment}`
      }
    }
  }
  if ((block.lang === 'json' || block.lang === '') && /^\s*[{[]/.test(block.text)) {
    let value: unknown
    try {
      value = JSON.parse(block.text)
    } catch {
      return 'JSON that does not parse (an elided body?)'
    }
    if (value !== null && typeof value === 'object' && BODY_MEMBERS.some((name) => name in value)) {
      return 'a body the service sends'
    }
  }
  return undefined
}

// --- Matching a shown value against the real one ----------------------------------------------------

/** Members whose values change from run to run: only their kind is compared. */
const VOLATILE = new Set([
  'request_id',
  'elapsed_time',
  'timestamp',
  'created_at',
  'started_at',
  'completed_at',
  'at',
  'duration_ms',
  'next_attempt_at',
  'time',
  'pid',
  'hostname',
])
const ANY = '…'

/** Makes shown JSON with `…` parse: a bare `…` is any value, any further members or elements. */
function patternOf(text: string): unknown {
  let out = ''
  let inString = false
  const stack: string[] = []
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      out += c
      if (c === '\\') out += text[++i]
      else if (c === '"') inString = false
    } else if (c === '"') {
      inString = true
      out += c
    } else if (c === '{' || c === '[') {
      stack.push(c)
      out += c
    } else if (c === '}' || c === ']') {
      stack.pop()
      out += c
    } else if (c === ANY) {
      const before = out.trimEnd().at(-1)
      out += before !== ':' && stack.at(-1) === '{' ? `"${ANY}": "${ANY}"` : `"${ANY}"`
    } else out += c
  }
  return parse(out)
}

const kind = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : isLosslessNumber(value) ? 'number' : typeof value

function sameNumber(shown: LosslessNumber, real: LosslessNumber): boolean {
  const isInteger = (n: LosslessNumber) => /^-?[0-9]+$/.test(n.value)
  if (isInteger(shown) && isInteger(real)) return BigInt(shown.value) === BigInt(real.value)
  return Number(shown.value) === Number(real.value)
}

const glob = (pattern: string) =>
  new RegExp(
    `^${pattern
      .split(ANY)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    's',
  )

/**
 * Where `real` differs from the `shown` pattern, as a list of `path: why`. In `shape` mode only members
 * and kinds are compared, and each element of an array against the first one shown.
 */
function differences(shown: unknown, real: unknown, path = '$', shape = false, ids = new Map()): string[] {
  if (shown === ANY) return []
  const name = path.split('.').at(-1) ?? ''
  if (name === 'job_id' && typeof shown === 'string' && typeof real === 'string') {
    ids.set(shown, real)
    return []
  }
  // In `shape` mode null stands for a member that may be null, and a null shown may be anything.
  if (shape && (shown === null || real === null)) return []
  if (VOLATILE.has(name) || (shape && !['object', 'array'].includes(kind(shown)))) {
    return kind(shown) === kind(real) || (kind(shown) === 'string' && kind(real) === 'number' && shape)
      ? []
      : [`${path}: shown a ${kind(shown)}, is ${stringify(real)}`]
  }
  if (typeof shown === 'string' && shown.includes(ANY)) {
    return typeof real === 'string' && glob(shown).test(real) ? [] : [`${path}: ${stringify(real)}`]
  }
  if (kind(shown) !== kind(real)) return [`${path}: shown ${stringify(shown)}, is ${stringify(real)}`]
  if (Array.isArray(shown) && Array.isArray(real)) {
    if (shape) {
      const first = shown.find((element) => element !== ANY)
      return first === undefined
        ? []
        : real.flatMap((e, i) => differences(first, e, `${path}[${i}]`, true, ids))
    }
    const cut = shown.indexOf(ANY)
    const head = cut === -1 ? shown : shown.slice(0, cut)
    const tail = cut === -1 ? [] : shown.slice(shown.lastIndexOf(ANY) + 1)
    if (cut === -1 ? real.length !== shown.length : real.length < head.length + tail.length) {
      return [`${path}: ${real.length} elements, shown ${shown.length}`]
    }
    return [
      ...head.flatMap((e, i) => differences(e, real[i], `${path}[${i}]`, shape, ids)),
      ...tail.flatMap((e, i) => {
        const at = real.length - tail.length + i
        return differences(e, real[at], `${path}[${at}]`, shape, ids)
      }),
    ]
  }
  if (kind(shown) === 'object') {
    const s = shown as Record<string, unknown>
    const r = real as Record<string, unknown>
    const extra = ANY in s ? [] : Object.keys(r).filter((key) => !(key in s))
    return [
      ...extra.map((key) => `${path}.${key}: not shown`),
      ...Object.keys(s)
        .filter((key) => key !== ANY)
        .flatMap((key) =>
          key in r ? differences(s[key], r[key], `${path}.${key}`, shape, ids) : [`${path}.${key}: missing`],
        ),
    ]
  }
  if (kind(shown) === 'number')
    return sameNumber(shown as LosslessNumber, real as LosslessNumber) ? [] : [path]
  return shown === real ? [] : [`${path}: shown ${stringify(shown)}, is ${stringify(real)}`]
}

function assertMatches(
  shownText: string,
  realText: string,
  options: { shape?: boolean; ids?: Map<string, string> },
) {
  const found = differences(patternOf(shownText), parse(realText), '$', options.shape, options.ids)
  assert.deepEqual(found, [], `shown:\n${shownText}\nreal:\n${realText}`)
}

/** A line of text output: `…` is anything, and request ids and times in ms stand for any. */
function lineMatches(shown: string, real: string): boolean {
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/
  const parts = shown.split(new RegExp(`(${uuid.source}|[0-9.]+ ms|${ANY})`))
  const source = parts
    .map((part, i) => {
      if (i % 2 === 0) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      return part === ANY ? '.*' : part.endsWith(' ms') ? '[0-9.]+ ms' : '[0-9a-f-]{36}'
    })
    .join('')
  return new RegExp(`^${source}$`).test(real)
}

// --- The parts a check needs: a folder per page, services, a receiver ------------------------------

const work = mkdtempSync(join(tmpdir(), 'algoserve-docs-'))
// Programs in a page's folder import what the docs import (lossless-json, ajv) from the repository's.
const folders = new Map<string, string>()
function folderOf(page: string): string {
  let folder = folders.get(page)
  if (folder === undefined) {
    folder = join(work, page.replace(/\W/g, '_'))
    mkdirSync(folder)
    symlinkSync(join(ROOT, 'node_modules'), join(folder, 'node_modules'))
    // Commands name the repository's examples as a checkout's root would.
    symlinkSync(join(ROOT, 'examples'), join(folder, 'examples'))
    folders.set(page, folder)
  }
  return folder
}

const services = new Map<string, Promise<TestApp>>()
let receiver: Promise<Receiver> | undefined
const hooks = () => {
  receiver ??= startReceiver()
  return receiver
}
/** A service with PrimeChecker and the page's own algorithms (a file of the page, or a repository path). */
/**
 * The service for a page's block: with the algorithms named, and without PrimeChecker if
 * `prime-checker=false`.
 */
function serviceFor(page: string, algorithms: string | undefined, primeChecker = 'true'): Promise<TestApp> {
  const paths = (algorithms ?? '')
    .split(',')
    .filter(Boolean)
    .map((path) => (isAbsolute(path) || path.includes('/') ? join(ROOT, path) : join(folderOf(page), path)))
  const key = `${paths.join(',')} ${primeChecker}`
  let service = services.get(key)
  if (service === undefined) {
    service = startApp({
      algorithms: paths,
      webhookAllowPrivate: true,
      primeChecker: primeChecker !== 'false',
    })
    services.set(key, service)
  }
  return service
}

after(async () => {
  for (const service of services.values()) await (await service).close()
  if (receiver) await (await receiver).close()
  rmSync(work, { recursive: true, force: true })
})

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('ALGOSERVE_')),
  )
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(command, args, { cwd, env: { ...clean, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr })
    })
  })
}

// JSON.rawJSON and the reviver's source, which the docs show as built in from Node 21, are behind a flag
// in Node 20.
const JSON_SOURCE_FLAG = 'rawJSON' in JSON ? [] : ['--harmony-json-parse-with-source']

/** `key=value` options, then the rest of a marker. */
function optionsOf(words: string): { options: Map<string, string>; rest: string } {
  const options = new Map<string, string>()
  let rest = words.trim()
  for (
    let match = /^([\w-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest);
    match;
    match = /^([\w-]+)(?:=(\S*))?(?:\s+|$)/.exec(rest)
  ) {
    const [word, name = '', value] = match
    if (value === undefined && !['shape', 'continues'].includes(name)) break
    options.set(name, value ?? '')
    rest = rest.slice(word.length)
  }
  return { options, rest }
}

/** A body in a marker: `<N digits>` stands for N digits. */
const bodyOf = (text: string) =>
  text.replace(/<([0-9]+) digits>/g, (_, n) => '1234567890'.repeat(n).slice(0, n))

// --- The checks ---------------------------------------------------------------------------------------

const runs = new Map<string, string>()
/** The job of a page's last `webhook` check: `{job}` in a later `http` check's path. */
const webhookJobs = new Map<string, string>()
const checks: Record<string, (block: Block, words: string) => Promise<void>> = {
  async file(block, name) {
    writeFileSync(join(folderOf(block.page), name.trim()), block.text)
  },

  async run(block, words) {
    const { options } = optionsOf(words)
    const service = block.text.includes(DOCS_URL) ? await serviceFor(block.page, undefined) : undefined
    // `expr // 42`: the value shown for an expression, asserted.
    const body = block.text
      .replaceAll(DOCS_URL, service?.url ?? DOCS_URL)
      .split('\n')
      .map((line) => {
        const shown = /^(\s*)([^/\s].*?)\s+\/\/ (-?[0-9]+n?|'[^']*'|true|false|null)\b/.exec(line)
        return shown ? `${shown[1]}assert__.deepStrictEqual(${shown[2]}, ${shown[3]})` : line
      })
      .join('\n')
    const program = `${options.has('continues') ? (runs.get(block.page) ?? '') : ''}\n${body}`
    runs.set(block.page, program)
    const file = join(folderOf(block.page), `block-${block.line}.mjs`)
    writeFileSync(file, `import assert__ from 'node:assert/strict'\n${program}`)
    const result = await run(process.execPath, [...JSON_SOURCE_FLAG, file], folderOf(block.page))
    assert.equal(result.code, 0, result.stderr)
  },

  async method(block, params) {
    const shown = /\/\/ (.*)$/.exec(block.text)?.[1]
    assert.ok(shown, 'no `// {json}` result shown')
    const file = join(folderOf(block.page), `block-${block.line}.mjs`)
    writeFileSync(
      file,
      [
        "import { parse, parseNumberAndBigInt, stringify } from 'lossless-json'",
        `const module = { ${block.text}\n}`,
        `process.stdout.write(stringify(await module.run(parse(${JSON.stringify(params)}, null, parseNumberAndBigInt))))`,
      ].join('\n'),
    )
    const result = await run(process.execPath, [file], folderOf(block.page))
    assert.equal(result.code, 0, result.stderr)
    assertMatches(shown, result.stdout, {})
  },

  async http(block, words) {
    const { options, rest } = optionsOf(words)
    const [, method, path = '', body] = /^(\w+)\s+(\S+)\s*(.*)$/.exec(rest) ?? []
    assert.ok(method, `no METHOD PATH in: ${words}`)
    const service = await serviceFor(block.page, options.get('algorithms'), options.get('prime-checker'))
    const job = webhookJobs.get(block.page) ?? '{job}'
    const response = await fetch(`${service.url}${path.replace('{job}', job)}`, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? bodyOf(body) : undefined,
    })
    const text = await response.text()
    assert.equal(response.status, Number(options.get('status') ?? 200), text)
    assertMatches(block.text, text, { shape: options.has('shape') })
  },

  async webhook(block, body) {
    const [service, receiver] = await Promise.all([serviceFor(block.page, undefined), hooks()])
    const before = receiver.received.length
    const job = JSON.parse(bodyOf(body))
    const response = await fetch(`${service.url}/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...job, webhook: `${receiver.url}/hook` }),
    })
    const created = (await response.json()) as { job_id: string }
    assert.equal(response.status, 202)
    const [received] = (await receiver.waitFor(before + 1)).slice(before)
    assertMatches(block.text, received?.body ?? '', {})
    webhookJobs.set(block.page, created.job_id)
    // Its delivery history records the answer once the attempt is over.
    for (;;) {
      const history = await fetch(`${service.url}/jobs/${created.job_id}/deliveries`)
      const { state } = (await history.json()) as { state: string }
      if (state !== 'waiting') break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  },

  async log(block, words) {
    // The service as `algoserve serve` runs it, its log on stdout.
    const [, method, path, body] = /^(\w+)\s+(\S+)\s*(.*)$/.exec(words) ?? []
    const shown = JSON.parse(block.text) as { msg: string }
    const data = join(work, `log-${block.line}`)
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('ALGOSERVE_')),
    )
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, 'serve', '--port', '0', '--data-dir', data],
      {
        env: { ...clean, ALGOSERVE_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    try {
      const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
      let url: string | undefined
      while (url === undefined) {
        const { value, done } = await lines.next()
        assert.ok(!done, 'the service ended before it listened')
        url = /Server listening at (http:\/\/127\.0\.0\.1:[0-9]+)/.exec(value)?.[1]
      }
      await fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: body || undefined,
      })
      for (;;) {
        const { value, done } = await lines.next()
        assert.ok(!done, `no log line '${shown.msg}'`)
        if (JSON.parse(value).msg === shown.msg) {
          assertMatches(block.text, value, { shape: true })
          break
        }
      }
    } finally {
      child.kill()
      await once(child, 'exit')
    }
  },

  async shell(block, words) {
    const { options } = optionsOf(words)
    const [service, receiver] = await Promise.all([
      serviceFor(block.page, options.get('algorithms')),
      hooks(),
    ])
    const ids = new Map<string, string>()
    const lines = block.text.split('\n')
    const at = (i: number) => lines[i] ?? ''
    let checked = 0
    for (let i = 0; i < lines.length; i++) {
      let command = at(i)
      if (command.trim() === '' || command.startsWith('#')) continue
      while (command.endsWith('\\')) command = `${command.slice(0, -1)}${at(++i)}`
      const output: string[] = []
      while (at(i + 1).startsWith('# ')) output.push(at(++i).slice(2))
      if (output.length === 0) continue
      let real = command
        .replace(/\s+#\s.*$/, '')
        .replaceAll(DOCS_URL, service.url)
        .replace(HOOK_URL, `${receiver.url}/hook`)
      for (const [shown, id] of ids) real = real.replaceAll(shown, id)
      const result = await run(
        'bash',
        ['-c', `algoserve() { "${process.execPath}" --import tsx "${MAIN}" "$@"; }\n${real}`],
        folderOf(block.page),
        { ALGOSERVE_URL: service.url },
      )
      assert.equal(result.code, 0, `${command}\n${result.stderr}`)
      if (/^[{[]/.test(output[0] ?? '')) assertMatches(output.join('\n'), result.stdout, { ids })
      else {
        const got = result.stdout.trimEnd().split('\n')
        assert.equal(
          got.length,
          output.length,
          `${command}\nshown:\n${output.join('\n')}\nreal:\n${result.stdout}`,
        )
        for (const [n, line] of output.entries()) {
          assert.ok(lineMatches(line, got[n] ?? ''), `${command}\nshown: ${line}\nreal:  ${got[n]}`)
        }
      }
      checked++
    }
    assert.ok(checked > 0, 'no command with its output in the block')
  },
}

// Blocks run in the order of their page (a file before the program that loads it), one page at a time.
for (const page of PAGES) {
  const marked = BLOCKS.filter((block) => block.page === page && block.marker !== undefined)
  for (const block of marked) {
    const [, name = '', words = ''] = /^(\S+)\s*(.*)$/.exec(block.marker ?? '') ?? []
    // `todo WHY`: a block that shows an output no check reproduces yet, reported as a todo.
    if (name === 'todo') test.todo(`${page}:${block.line} not checked: ${words}`)
    else
      test(`${page}:${block.line} ${block.marker}`, async () => {
        const check = checks[name]
        assert.ok(check, `unknown check '${name}' (known: ${Object.keys(checks).join(', ')})`)
        await check(block, words)
      })
  }
}

test('every block that shows an output is checked', (t) => {
  const unchecked = BLOCKS.flatMap((block) => {
    const why = block.marker === undefined ? claimsOutput(block) : undefined
    return why === undefined ? [] : [`${block.page}:${block.line}: ${why}`]
  })
  for (const block of BLOCKS.filter((b) => b.marker !== undefined)) {
    t.diagnostic(`checked ${block.page}:${block.line} (${block.marker})`)
  }
  assert.deepEqual(unchecked, [], 'blocks that show an output without a `<!-- check: ... -->` marker')
})
