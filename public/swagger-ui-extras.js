// Served with Swagger UI at /docs (see src/routes/docs.ts); runs in the browser.
//
// 1. Integers above 2^53 stay exact. Swagger UI parses a JSON response to pretty-print it, and the
//    request body too, which rounds 18446744073709551617 to 18446744073709552000. JSON.parse is wrapped
//    so that an integer literal a double cannot hold becomes JSON.rawJSON of its own digits, which
//    JSON.stringify writes back unchanged. Browsers without JSON.rawJSON keep the native behaviour.
// 2. "Try it out" on GET /jobs/{job_id} is filled with the id of the job last created on this page,
//    so that its default succeeds.
;(() => {
  const nativeParse = JSON.parse
  const INTEGER = /^-?[0-9]+$/
  if (typeof JSON.rawJSON === 'function') {
    JSON.parse = function parse(text, reviver) {
      return nativeParse(text, function exact(key, value, context) {
        const kept =
          typeof value === 'number' &&
          !Number.isSafeInteger(value) &&
          context !== undefined &&
          INTEGER.test(context.source)
            ? JSON.rawJSON(context.source)
            : value
        return reviver === undefined ? kept : reviver.call(this, key, kept, context)
      })
    }
  }

  const GET_JOB = ['/jobs/{job_id}', 'get']

  /** A Swagger UI plugin: after a 202 from POST /jobs, GET /jobs/{job_id} gets that job_id. */
  function plugin(system) {
    return {
      statePlugins: {
        spec: {
          wrapActions: {
            setResponse: (original) => (path, method, response) => {
              const result = original(path, method, response)
              const jobId = response?.body?.job_id
              if (path === '/jobs' && method === 'post' && response.status === 202 && jobId) {
                system.specActions.changeParam(GET_JOB, 'job_id', 'path', String(jobId))
              }
              return result
            },
          },
        },
      },
    }
  }

  window.AlgoserveSwaggerUi = { plugin }
})()
