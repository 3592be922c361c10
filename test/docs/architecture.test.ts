// docs/architecture.md against the tree: every path it gives under src/, test/ or bench/ and every file it
// names (`name.ts`, `jobs/cancel.ts`, `settings.md`) exists, and every folder of src/, bench/ and
// bench/http/ is on its map, so that a rename or a move that leaves the page behind fails here.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PAGE = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8')

/** Where a file the page names may be: the repository's own folders, not what is built or installed. */
const SEARCHED = ['src', 'test', 'bench', 'docs', 'wasm/prime', 'public', 'examples', 'deploy', 'scripts']

function filesUnder(folder: string): string[] {
  return readdirSync(join(ROOT, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(ROOT.length))
}

const FILES = [
  ...readdirSync(ROOT, { withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name),
  ...SEARCHED.flatMap(filesUnder),
]

/** The paths the page gives from the top of the repository (up to a placeholder such as `<name>`). */
const paths = [...new Set(PAGE.match(/\b(?:src|test|bench)\/[\w./-]*/g) ?? [])].map((path) =>
  path.replace(/[.]+$/, ''),
)

/** The files the page names: a name with its extension, alone or after a folder or two. */
const names = [...new Set(PAGE.match(/(?<![\w/.-])(?:[\w-]+\/)*[\w-]+\.(?:ts|mjs|sh|md|json|yaml)\b/g) ?? [])]

test('the page names enough paths and files for the checks below to mean something', () => {
  assert.ok(paths.length >= 20, `paths: ${paths.join(' ')}`)
  assert.ok(names.length >= 40, `names: ${names.join(' ')}`)
  assert.ok(names.includes('thread-batch.ts') && paths.includes('src/execution/lanes.ts'))
})

test('every src/, test/ and bench/ path the page gives exists', () => {
  const missing = paths.filter((path) => !existsSync(join(ROOT, path)))
  assert.deepEqual(missing, [], `docs/architecture.md gives paths the tree lacks: ${missing.join(', ')}`)
})

test('every file the page names exists in the tree', () => {
  const missing = names.filter((name) => !FILES.some((file) => file === name || file.endsWith(`/${name}`)))
  assert.deepEqual(missing, [], `docs/architecture.md names files the tree lacks: ${missing.join(', ')}`)
})

test('every folder of src/, bench/ and bench/http/ is on the map', () => {
  const folders = ['src', 'bench', 'bench/http'].flatMap((top) =>
    readdirSync(join(ROOT, top), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${entry.name}/`),
  )
  const map = PAGE.slice(PAGE.indexOf('## The map'), PAGE.indexOf('## How a request flows'))
  const absent = folders.filter((folder) => !map.includes(folder))
  assert.deepEqual(absent, [], `docs/architecture.md's map leaves out: ${absent.join(', ')}`)
})
