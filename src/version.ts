// The service's version, read from package.json at load so that it has one source. The same relative path
// works from src/ (tsx) and dist/ (tsc), both one folder below the package root.
import { createRequire } from 'node:module'

const { version } = createRequire(import.meta.url)('../package.json') as { version?: unknown }
if (typeof version !== 'string') throw new Error('package.json has no version')

/** package.json's version: metadata's `version`, the OpenAPI document's and the webhook user agent's. */
export const VERSION: string = version
