// Another checkout for a same-run A/B against a baseline: a git worktree of a revision in a scratch folder,
// with this checkout's node_modules, built unless asked not to. The scripts in shell have revision_tree in
// common.sh.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './service.mjs'

/**
 * A worktree of revision `rev` of this repository (`path`), built (`npm run build`) when `build` holds;
 * `remove()` takes the worktree away again, from git's list as well.
 */
export function otherCheckout(rev, { build = true } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'algoserve-checkout-'))
  const path = join(scratch, 'tree')
  execFileSync('git', ['worktree', 'add', '--quiet', '--detach', path, rev], { cwd: ROOT, stdio: 'inherit' })
  symlinkSync(join(ROOT, 'node_modules'), join(path, 'node_modules'))
  const remove = () => {
    execFileSync('git', ['worktree', 'remove', '--force', path], { cwd: ROOT })
    rmSync(scratch, { recursive: true, force: true })
  }
  try {
    if (build) execFileSync('npm', ['run', 'build', '--silent'], { cwd: path, stdio: 'inherit' })
  } catch (error) {
    remove()
    throw error
  }
  return { path, remove }
}
