/**
 * PostgreSQL for the integration tests. The global setup runs one server for the whole run (it
 * starts in about a second beside etcd, hack/harness/postgres.ts); each test file takes a
 * database of its own on it. A test that restarts PostgreSQL starts a private server instead, so
 * that no other file's database goes away under it.
 */
import pg from "pg";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { postgresUrl, startPostgres, type Postgres, type PostgresInfo } from "../../hack/harness/postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresInfo;
  }
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function onServer<T>(
  info: Pick<PostgresInfo, "host" | "port" | "user">,
  fn: (c: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ host: info.host, port: info.port, user: info.user, database: "postgres" });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A new empty database on the run's PostgreSQL, named after this worker (`<prefix>_<pid>_<hex>`). */
export async function testDatabase(prefix = "test"): Promise<TestDatabase> {
  const info = inject("postgres");
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
  await onServer(info, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: postgresUrl(info, name),
    name,
    drop: () => onServer(info, (c) => dropDatabase(c, name)),
  };
}

/**
 * Drops `name` once the connections its users closed have left the server. pg's pool.end()
 * resolves before the server has ended those sessions; terminating them (DROP ... WITH (FORCE))
 * would send a closing client a FATAL error that no listener takes any more, an uncaught
 * exception in the test run. FORCE only after a deadline, for a test that leaked a connection.
 */
async function dropDatabase(c: pg.Client, name: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const res = await c.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1",
      [name],
    );
    if (res.rows[0]?.n === "0") break;
    if (Date.now() > deadline) break;
    // Evidence-based: asks the server again until its sessions are gone; nothing else to wait on.
    await c.query("SELECT pg_sleep(0.02)");
  }
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * A PostgreSQL of this test file's own (to restart it), in a work dir the region harness reaps if
 * this worker dies (`hcp-region-*` with owner.pid). stop() stops it and removes the dir.
 */
export async function privatePostgres(): Promise<Postgres> {
  const workDir = await mkdtemp(join(tmpdir(), "hcp-region-postgres-"));
  await writeFile(join(workDir, "owner.pid"), `${process.pid}\n`);
  const server = await startPostgres({ workDir }).catch(async (err: unknown) => {
    await rm(workDir, { recursive: true, force: true });
    throw err;
  });
  return {
    ...server,
    stop: async () => {
      await server.stop();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}
