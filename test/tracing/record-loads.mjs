// Started with `--import` in a child service: records the URL of every module the ESM loader resolves,
// one a line, in the file LOADS_FILE names (the tracing tests read which modules were loaded).
import { register } from 'node:module'

register('./record-loads-hook.mjs', import.meta.url, { data: { file: process.env.LOADS_FILE } })
