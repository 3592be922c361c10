// Its own module: the primary of several HTTP processes bounds its shutdown by it too, without loading
// the service.
/**
 * How long a shutdown may take past the drain delay and the grace period, whatever Redis does: then the
 * process exits anyway (docs/operating.md).
 */
export const SHUTDOWN_MARGIN_MS = 5000
