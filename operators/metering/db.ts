/**
 * What every part of the ledger shares: the pool, one transaction at a time on one connection,
 * the errors the ledger raises, and the checks of what callers hand it.
 */
import type pg from "pg";

/** Either the pool or a client inside a transaction: what a statement needs. */
export type Queryable = Pick<pg.PoolClient, "query">;

/** A fact the ledger already holds differently: refused, never overwritten. */
export class LedgerConflictError extends Error {
  /** The fact refused, e.g. "resourceId" or "deletedAt". */
  readonly field: string;
  readonly recorded: string;
  readonly offered: string;

  constructor(subject: string, field: string, recorded: string, offered: string) {
    super(`${subject}: ${field} is already recorded as ${recorded}; refusing ${offered}`);
    this.name = "LedgerConflictError";
    this.field = field;
    this.recorded = recorded;
    this.offered = offered;
  }
}

/** Input the ledger refuses before it reaches PostgreSQL (the message names the field). */
export class LedgerInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LedgerInputError";
  }
}

/**
 * Runs `fn` in one transaction on one connection: committed if it resolves, rolled back if it
 * throws. A connection that failed mid-way (a restarted server) is discarded, not pooled again.
 */
export async function inTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await fn(client);
    await client.query("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch((rollbackErr: unknown) => {
      broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
    });
    throw err;
  } finally {
    client.release(broken);
  }
}

/** The SQLSTATE of a PostgreSQL error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

export function requireText(field: string, value: string | undefined): string {
  if (typeof value !== "string" || value.trim() === "")
    throw new LedgerInputError(`${field} must be a non-empty string`);
  return value;
}

export function requireTime(field: string, value: Date): Date {
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw new LedgerInputError(`${field} must be a valid Date, got ${String(value)}`);
  return value;
}

/** A non-negative decimal (a number or a decimal string), as the numeric text PostgreSQL takes. */
export function requireQuantity(field: string, value: number | string): string {
  const text = typeof value === "number" ? (Number.isFinite(value) ? String(value) : "") : value;
  if (!/^\d+(\.\d+)?$/.test(text))
    throw new LedgerInputError(`${field} must be a non-negative decimal, got ${String(value)}`);
  return text;
}

/** An hour's start: `at` truncated to the whole UTC hour. */
export function hourOf(at: Date): Date {
  const ms = at.getTime();
  return new Date(ms - (((ms % 3_600_000) + 3_600_000) % 3_600_000));
}

/** One spelling per decimal value ("016.50" → "16.5", "0.0" → "0"), so equal rates compare equal. */
export function canonicalDecimal(text: string): string {
  const [whole = "0", fraction = ""] = text.split(".");
  const w = whole.replace(/^0+(?=\d)/, "");
  const f = fraction.replace(/0+$/, "");
  return f ? `${w}.${f}` : w;
}
