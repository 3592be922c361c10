// Version 4: the trace context a job was created in (JSON, or NULL when it was not traced), kept on the
// job for its runs and on its delivery for the webhook's attempts (docs/tracing.md).
export const V4_TRACE_CONTEXT = `ALTER TABLE jobs ADD COLUMN trace TEXT;
   ALTER TABLE deliveries ADD COLUMN trace TEXT;`
