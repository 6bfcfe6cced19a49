/**
 * The ledger's schema, applied with node-pg-migrate from the SQL files in migrations/ (decision
 * 0013). Migrations run under node-pg-migrate's advisory lock, waiting for it, so operators that
 * start together apply each migration once; all pending ones in one transaction.
 */
import { runner } from "node-pg-migrate";
import { fileURLToPath } from "node:url";

export const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
/** The table node-pg-migrate records applied migrations in. */
export const MIGRATIONS_TABLE = "ledger_migrations";

/** Applies every pending migration to the database at `url`; returns the names applied now. */
export async function migrateLedger(url: string, log: (line: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl: url,
    dir: MIGRATIONS_DIR,
    migrationsTable: MIGRATIONS_TABLE,
    direction: "up",
    checkOrder: true,
    singleTransaction: true,
    advisoryLockMode: "wait",
    log,
  });
  return applied.map((m) => m.name);
}
