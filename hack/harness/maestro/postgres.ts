/**
 * The PostgreSQL side of a Maestro server: one fresh database per server, named after the harness
 * process so that the databases of a harness that died without stopping its server are dropped by
 * the next run.
 */
import { isAlive } from "../process.ts";
import { exec } from "./process.ts";

const DB_PREFIX = "maestro_";

export interface PostgresConnection {
  host: string;
  port: number;
  /** A superuser reachable without a password (trust auth), as on the dev machines and in CI. */
  user: string;
}

export const defaultPostgres: PostgresConnection = { host: "127.0.0.1", port: 5432, user: "postgres" };

export function psql(pg: PostgresConnection, sql: string): Promise<string> {
  return exec(
    "psql",
    [
      "-h",
      pg.host,
      "-p",
      String(pg.port),
      "-U",
      pg.user,
      "-d",
      "postgres",
      "-v",
      "ON_ERROR_STOP=1",
      "-tAc",
      sql,
    ],
    {
      env: { ...process.env, PGCONNECT_TIMEOUT: "10" },
    },
  ).then(({ stdout }) => stdout);
}

/** The name of a new database owned by this harness process. */
export function databaseName(suffix: string): string {
  return `${DB_PREFIX}${process.pid}_${suffix}`;
}

/** Drops the databases of harness processes that died without stopping their server. */
export async function reapStaleDatabases(pg: PostgresConnection): Promise<void> {
  const names = (await psql(pg, `SELECT datname FROM pg_database WHERE datname LIKE '${DB_PREFIX}%'`)).split(
    "\n",
  );
  for (const name of names) {
    const owner = /^maestro_(\d+)_[0-9a-f]+$/.exec(name.trim());
    if (!owner || isAlive(Number(owner[1]))) continue;
    await psql(pg, `DROP DATABASE IF EXISTS "${name.trim()}" WITH (FORCE)`).catch(() => undefined);
  }
}
