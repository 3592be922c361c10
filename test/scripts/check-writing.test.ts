// The writing rules' check (scripts/check-writing.mjs) on a repository of its own: what it flags and what
// it leaves alone, a long string above all, which is no comment.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const SCRIPT = fileURLToPath(new URL('../../scripts/check-writing.mjs', import.meta.url))
const repo = mkdtempSync(join(tmpdir(), 'algoserve-writing-'))
after(() => rmSync(repo, { recursive: true, force: true }))

const long = (prefix: string) => `${prefix}${'word '.repeat(30)}`.trimEnd()

function check(files: Record<string, string>): { code: number; lines: string[] } {
  rmSync(repo, { recursive: true, force: true })
  mkdirSync(repo)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true })
    writeFileSync(join(repo, path), text)
  }
  execFileSync('git', ['init', '-q'], { cwd: repo })
  const result = spawnSync(process.execPath, [SCRIPT], { cwd: repo, encoding: 'utf8' })
  const lines = result.stderr.split('\n').filter((line) => /^\S+:\d+: /.test(line))
  return { code: result.status ?? -1, lines: lines.map((line) => line.replace(/: .*$/, '')) }
}

test('long comment lines, issue numbers and outside notes are flagged, file and line', () => {
  const { code, lines } = check({
    'src/a.ts': `${long('// ')}\nconst x = 1\n/**\n${long(' * ')}\n */\nexport const y = x // fine\n`,
    'bench/run.sh': `#!/usr/bin/env bash\n${long('# ')}\necho ok\n`,
    'docs/page.md': 'As issue 12 asked.\nWhat the issue wanted.\nSee ../shared/spec/interface.md.\n',
    'test/b.test.ts': '// Fixed upstream in bullmq#457, which is fine.\n',
  })
  assert.equal(code, 1)
  assert.deepEqual(lines.sort(), [
    'bench/run.sh:2',
    'docs/page.md:1',
    'docs/page.md:2',
    'docs/page.md:3',
    'src/a.ts:1',
    'src/a.ts:4',
  ])
})

test('a long string, a long code line and files outside the checked folders pass', () => {
  const { code, lines } = check({
    'src/a.ts': `export const text = \`\n${long('// not a comment ')}\n\`\nexport const s = '${long('')}'\n`,
    'notes/elsewhere.md': 'issue 12\n',
    'src/b.ts': `// ${'short '.repeat(10)}\n`,
  })
  assert.deepEqual(lines, [])
  assert.equal(code, 0)
})
