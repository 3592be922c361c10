// Answers whose JSON the route writes itself (from stored text, or from parts written once): sent as they
// are, as JSON. The route's response schema documents them; nothing serialises them again, so the
// reply's type, which the schema gives, does not apply to them.
import type { FastifyReply } from 'fastify'

const JSON_TYPE = 'application/json; charset=utf-8'

export function sendJsonText(reply: FastifyReply, json: string | Buffer): FastifyReply {
  return reply.type(JSON_TYPE).serializer(String).send(json)
}
