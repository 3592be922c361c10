// The SQLite binding under the job store. From Node 24 on, the store uses the runtime's own node:sqlite:
// nothing to compile at install. Node 20 has no node:sqlite and Node 22's still warns that it is
// experimental, so there the store uses better-sqlite3 (a native addon, an optional dependency compiled
// at install). better-sqlite3 12 must never load on Node 24: its objects are `node::ObjectWrap`s, whose
// destructor in Node 24.19+ headers removes an environment cleanup hook, and Node 24's runtime can abort
// there (`Assertion failed: (env) != nullptr`) when V8 garbage-collects a statement.
// Both bindings write the same SQLite file format; the store's SQL is the same on both.
import { createRequire } from 'node:module'
import type * as NodeSqlite from 'node:sqlite'
import type BetterSqlite3 from 'better-sqlite3'

export type DriverName = 'node:sqlite' | 'better-sqlite3'

export type SqlValue = string | number | bigint | null
/** Named parameters are written `@name` in the SQL and passed without the `@`. */
export type SqlParams = Record<string, SqlValue>

export interface Statement {
  run(...params: SqlValue[] | [SqlParams]): { changes: number | bigint }
  get(...params: SqlValue[] | [SqlParams]): unknown
  all(...params: SqlValue[] | [SqlParams]): unknown[]
}

export interface Connection {
  readonly driver: DriverName
  readonly open: boolean
  readonly inTransaction: boolean
  prepare(sql: string): Statement
  exec(sql: string): void
  close(): void
}

export interface OpenOptions {
  /** How long a statement waits for another connection's lock before failing with SQLITE_BUSY. */
  timeoutMs?: number
  readOnly?: boolean
  driver?: DriverName
}

/** node:sqlite without a flag or an experimental warning (Node 24 and later), else better-sqlite3. */
export function defaultDriver(): DriverName {
  return Number(process.versions.node.split('.')[0]) >= 24 ? 'node:sqlite' : 'better-sqlite3'
}

/** The drivers the store can use on this runtime: node:sqlite where built in, better-sqlite3 before 24. */
export function usableDrivers(): DriverName[] {
  const drivers: DriverName[] = []
  if (process.getBuiltinModule('node:sqlite') !== undefined) drivers.push('node:sqlite')
  if (defaultDriver() === 'better-sqlite3') drivers.push('better-sqlite3')
  return drivers
}

export function openConnection(file: string, options: OpenOptions = {}): Connection {
  const driver = options.driver ?? defaultDriver()
  return driver === 'node:sqlite' ? openNodeSqlite(file, options) : openBetterSqlite3(file, options)
}

/** SQLite's extended result code of a failed call, whichever driver threw it. */
export function sqliteCode(error: unknown): number | undefined {
  const { errcode, code } = (error ?? {}) as { errcode?: unknown; code?: unknown }
  if (typeof errcode === 'number') return errcode
  return typeof code === 'string' ? BETTER_SQLITE3_CODES[code] : undefined
}

export const SQLITE_BUSY = 5
export const SQLITE_CONSTRAINT_UNIQUE = 2067
const BETTER_SQLITE3_CODES: Record<string, number> = {
  SQLITE_BUSY,
  SQLITE_CONSTRAINT_UNIQUE,
}

/** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
export function inTransaction<T>(db: Connection, work: () => T): T {
  db.exec('BEGIN')
  try {
    const result = work()
    db.exec('COMMIT')
    return result
  } catch (error) {
    // SQLite has already rolled back after some failures (a full disk, an I/O error).
    if (db.inTransaction) db.exec('ROLLBACK')
    throw error
  }
}

function openNodeSqlite(file: string, options: OpenOptions): Connection {
  const sqlite = process.getBuiltinModule('node:sqlite') as typeof NodeSqlite | undefined
  if (sqlite === undefined) throw new Error(`node:sqlite is not built into Node ${process.version}.`)
  const db = new sqlite.DatabaseSync(file, {
    timeout: options.timeoutMs ?? 0,
    readOnly: options.readOnly ?? false,
  })
  return {
    driver: 'node:sqlite',
    get open() {
      return db.isOpen
    },
    get inTransaction() {
      return db.isTransaction
    },
    prepare: (sql) => db.prepare(sql) as unknown as Statement,
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
  }
}

function openBetterSqlite3(file: string, options: OpenOptions): Connection {
  let Database: typeof BetterSqlite3
  try {
    Database = createRequire(import.meta.url)('better-sqlite3')
  } catch (error) {
    throw new Error(
      `Node ${process.version} has no usable node:sqlite, and better-sqlite3 did not load: reinstall ` +
        'with a C++ toolchain (npm install), or use Node 24 or later.',
      { cause: error },
    )
  }
  const db = new Database(file, { timeout: options.timeoutMs ?? 0, readonly: options.readOnly ?? false })
  return {
    driver: 'better-sqlite3',
    get open() {
      return db.open
    },
    get inTransaction() {
      return db.inTransaction
    },
    prepare: (sql) => db.prepare(sql) as unknown as Statement,
    exec: (sql) => {
      db.exec(sql)
    },
    close: () => {
      db.close()
    },
  }
}
