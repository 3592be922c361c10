// Which routes are the API, and which of them answer errors wrapped under `detail`: one definition for
// the rate limits and the OpenAPI document (its 401 and 429 answers).

/** The job routes: the contract's /jobs family, and the job summary beside it (issue 16). */
export const isJobPath = (path: string): boolean => path.startsWith('/jobs') || path === '/job-summary'

/** The API proper: rate-limited, and documented with 401 and 429 when keys and limits are on. */
export const isApiPath = (path: string): boolean => path === '/invoke' || isJobPath(path)
