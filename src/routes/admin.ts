// POST /admin/reload: loads ALGOSERVE_ALGORITHMS again, as SIGHUP does
// (docs/operating.md#reloading-the-algorithms), and says what it did or why it was refused. Registered
// only when API keys are on: the key is what keeps a stranger from making the service import files;
// without keys the operator sends SIGHUP, and the path is a 404 like any other unknown one.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ReloadOutcome } from '../algorithms/reload.js'

export interface AdminRouteOptions {
  reload(trigger: string): Promise<ReloadOutcome>
}

export const adminRoutes: FastifyPluginAsyncTypebox<AdminRouteOptions> = async (app, options) => {
  app.post(
    '/admin/reload',
    // Not in the document: an operator's route, documented in docs/api.md and docs/operating.md.
    { config: { kind: 'api', errorShape: 'flat' }, schema: { hide: true } },
    // 409 VERSION_CHANGED or 422 RELOAD_FAILED, from the error handler, when it is refused.
    async (request) => ({ request_id: request.id, ...(await options.reload('admin')) }),
  )
}
