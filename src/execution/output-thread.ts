// The main thread's side of output-worker.ts: one thread for every process of the service, started at the
// first long line and started again after it dies. It keeps the service alive only while it reads.
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { LineRead, LineReply, LineTask } from './output-worker.js'

// Under tsx (tests, `npm run dev`) the sources are .ts. On Node 20 a thread gets tsx's hook for require
// but not its hook for import, and an evaluated thread gets neither: it registers the first itself and
// requires the file, as piscina's threads do. The build runs .js.
const UNDER_TSX = import.meta.url.endsWith('.ts')
const WORKER_FILE = new URL(`./output-worker${UNDER_TSX ? '.ts' : '.js'}`, import.meta.url)
function newWorker(): Worker {
  if (!UNDER_TSX) return new Worker(WORKER_FILE)
  const tsx = JSON.stringify(createRequire(import.meta.url).resolve('tsx/cjs'))
  return new Worker(`require(${tsx}); require(${JSON.stringify(fileURLToPath(WORKER_FILE))})`, { eval: true })
}

class OutputThread {
  #worker: Worker | undefined
  readonly #waiting = new Map<number, (read: LineRead) => void>()
  #seq = 0

  /**
   * The line read there: its first `bytes` bytes of `blocks`, taken in order, which are moved to the thread
   * (left empty here).
   */
  read(blocks: ArrayBuffer[], bytes: number, schema: string): Promise<LineRead> {
    const worker = this.#start()
    const seq = this.#seq++
    if (this.#waiting.size === 0) worker.ref()
    const task: LineTask = { seq, blocks, bytes, schema }
    worker.postMessage(task, blocks)
    return new Promise((resolve) => this.#waiting.set(seq, resolve))
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker
    const worker = newWorker()
    worker.unref()
    worker.on('message', ({ seq, read }: LineReply) => {
      this.#waiting.get(seq)?.(read)
      this.#waiting.delete(seq)
      if (this.#waiting.size === 0) worker.unref()
    })
    // Out of memory on a line, say: the lines it held are refused, and the next line starts a new thread.
    const end = () => {
      if (this.#worker !== worker) return
      this.#worker = undefined
      for (const resolve of this.#waiting.values())
        resolve({ kind: 'refused', problem: 'its process wrote a line that could not be read' })
      this.#waiting.clear()
    }
    worker.on('error', end)
    worker.on('exit', end)
    this.#worker = worker
    return worker
  }
}

/** The thread of the whole service. */
export const outputThread = new OutputThread()
