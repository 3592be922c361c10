// The process's root logger, made before anything that logs: the job backend logs from its opening on,
// before the app exists, and the app is given the same logger (Fastify's loggerInstance), so that every
// line goes to one destination in one shape. The app's own lines go through Fastify's child of it, which
// adds no field.
import type { FastifyBaseLogger } from 'fastify'
import pino, { type DestinationStream, type LoggerOptions } from 'pino'
import { accessSink, type LineSink } from '../http/request-log.js'

/** pino's options and where its lines go (default: stdout), as Fastify's `logger` option takes them. */
export type LoggerSettings = LoggerOptions & { stream?: DestinationStream }

export interface ProcessLogger {
  log: FastifyBaseLogger
  /** Where the app writes its access lines around pino, or null to write them through it (request-log.ts). */
  access: LineSink | null
}

export function processLogger(settings: LoggerSettings): ProcessLogger {
  const { stream, ...options } = settings
  return {
    log: stream === undefined ? pino(options) : pino(options, stream),
    access: accessSink(settings),
  }
}
