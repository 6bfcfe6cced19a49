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
    drop: () =>
      onServer(info, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
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
