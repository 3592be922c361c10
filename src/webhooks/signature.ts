// Standard Webhooks signatures: `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the
// bytes of a `whsec_` secret (https://www.standardwebhooks.com/).
import { createHmac } from 'node:crypto'

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  return `v1,${mac}`
}
