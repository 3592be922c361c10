// `algoserve serve --watch` (ALGOSERVE_WATCH): the files and folders ALGOSERVE_ALGORITHMS names are watched,
// and a change reloads the algorithms as SIGHUP does. A file is watched through its folder, filtered by
// its name: an editor that saves by writing a new file and renaming it over the old one would leave a
// watch of the file itself on the old one. Folders are watched with what is inside them, at any depth (a
// process algorithm's program beside its algorithm.json). Package names are not watched.
import { type FSWatcher, statSync, watch } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'

/** Changes closer together than this are one reload: saving a file is often several writes. */
const SETTLE_MS = 500

export interface Watch {
  close(): void
}

/** Calls `changed` once the files and folders of `entries` have changed and then stayed as they are. */
export function watchAlgorithms(entries: readonly string[], changed: () => void, cwd = process.cwd()): Watch {
  let timer: NodeJS.Timeout | undefined
  const settle = () => {
    clearTimeout(timer)
    timer = setTimeout(changed, SETTLE_MS)
  }
  const watchers: FSWatcher[] = []
  for (const entry of entries) {
    const path = resolve(cwd, entry)
    const stat = statSync(path, { throwIfNoEntry: false })
    if (stat?.isDirectory()) {
      watchers.push(watch(path, { recursive: true, persistent: false }, settle))
    } else if (stat?.isFile()) {
      const name = basename(path)
      watchers.push(
        watch(dirname(path), { persistent: false }, (_event, file) => {
          if (file === name) settle()
        }),
      )
    }
  }
  return {
    close() {
      clearTimeout(timer)
      for (const watcher of watchers) watcher.close()
    },
  }
}
