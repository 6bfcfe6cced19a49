/**
 * A real `maestro server` on a fresh PostgreSQL database, talking MQTT 5 over TLS to the region's
 * broker, every listener on 127.0.0.1; its REST API (rest.ts) and gRPC publish (grpc.ts) bound to it.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort, waitFor } from "../ports.ts";
import { startProcess, type ManagedProcess } from "../process.ts";
import { bundleEvent, grpcPublish, type BundleSpec, type GrpcCloudEvent } from "./grpc.ts";
import {
  databaseName,
  defaultPostgres,
  psql,
  reapStaleDatabases,
  type PostgresConnection,
} from "./postgres.ts";
import {
  MAESTRO_SOURCE_ID,
  SUBSCRIBED_LOG,
  exec,
  httpOk,
  logContains,
  maestroBinary,
  mqttConfigYaml,
  type MaestroMqttConfig,
} from "./process.ts";
import { maestroRestClient, type MaestroConsumer, type ResourceBundle } from "./rest.ts";

/**
 * In broadcast mode a server instance joins the hash ring, and takes the consumers the ring gives it,
 * only on a 5 s tick (hard-coded in cmd/maestro/servecmd); status events of a consumer it does not
 * own yet are dropped ("skipping resource status update as it is not owned by the current instance")
 * and recovered only by the status resync it sends once it owns the consumer.
 */
const HASH_RING_SETTLE_MS = 5_500;

export interface MaestroServer {
  /** http://127.0.0.1:<port>; the REST API is under /api/maestro/v1. */
  apiUrl: string;
  /** 127.0.0.1:<port>, plaintext gRPC (h2c) without authentication. */
  grpcAddress: string;
  healthUrl: string;
  metricsUrl: string;
  /** The fresh database, dropped by stop(). */
  database: string;
  /** MQTT client ID (= instance ID in the server_instances table). */
  clientId: string;
  logPath: string;
  readonly process: ManagedProcess;
  /**
   * POST /consumers. The consumer must exist before bundles for it are created. In broadcast mode it
   * returns only once the server owns the consumer on its hash ring (about 5.5 s).
   */
  createConsumer(name: string, labels?: Record<string, string>): Promise<MaestroConsumer>;
  listConsumers(): Promise<MaestroConsumer[]>;
  /** gRPC spec.create_request; returns the bundle id (generated unless given). */
  createBundle(spec: BundleSpec, id?: string): Promise<string>;
  /** gRPC spec.update_request; `version` 0 (default) means "whatever is current". Conflicts reject. */
  updateBundle(id: string, spec: BundleSpec, version?: number): Promise<void>;
  /** REST GET; undefined once the bundle is gone (404). */
  getBundle(id: string): Promise<ResourceBundle | undefined>;
  /** REST GET list; `search` is Maestro's TSL filter, e.g. "consumer_name = 'mgmt-1'". */
  listBundles(search?: string): Promise<ResourceBundle[]>;
  /** REST DELETE: marks the bundle deleting; it disappears once the agent confirms (condition Deleted). */
  deleteBundle(id: string): Promise<void>;
  /** Raw gRPC Publish of one CloudEvent (any action), for tests that need other shapes. */
  publish(event: GrpcCloudEvent): Promise<void>;
  /** Stops the server and drops its database. */
  stop(): Promise<void>;
}

export interface StartMaestroServerOptions {
  /** Region work dir: the pid file goes here (so a stale run is reaped), the rest in a subdirectory. */
  workDir: string;
  /** The server's own MQTT credentials (certificate CN `maestro`). */
  mqtt: MaestroMqttConfig;
  /**
   * "broadcast" (default): the server subscribes to the plain wildcard and owns every consumer on
   * the hash ring; status resync requests are addressed by consumer name. "shared": also works with
   * a plain wildcard on a single replica, but this Maestro addresses its status resync requests to
   * the consumer's database ID instead of its name, so agents never receive them.
   */
  subscriptionType?: "broadcast" | "shared";
  postgres?: PostgresConnection;
  /** klog verbosity; 4 logs every CloudEvent sent and received. Default 2. */
  verbosity?: number;
  startTimeoutMs?: number;
}

/** Writes the database settings files (Maestro reads them from files only) and returns their flags. */
async function databaseFlags(dir: string, pg: PostgresConnection, database: string): Promise<string[]> {
  // Relative paths would resolve against the directory Maestro was compiled in: every path is absolute.
  const files: Record<string, string> = {
    host: pg.host,
    port: String(pg.port),
    user: pg.user,
    password: "",
    name: database,
  };
  const dbFlags: string[] = ["--db-sslmode=disable"];
  for (const [key, value] of Object.entries(files)) {
    const path = join(dir, `db.${key}`);
    await writeFile(path, value);
    dbFlags.push(`--db-${key}-file=${path}`);
  }
  return dbFlags;
}

interface ServerPorts {
  http: number;
  grpc: number;
  grpcBroker: number;
  metrics: number;
  health: number;
}

async function serverPorts(): Promise<ServerPorts> {
  const [http, grpc, grpcBroker, metrics, health] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  return { http, grpc, grpcBroker, metrics, health };
}

interface ServerFlags {
  dbFlags: string[];
  ports: ServerPorts;
  brokerConfig: string;
  subscriptionType: string;
  clientId: string;
  verbosity: number;
}

function serverArgs(f: ServerFlags): string[] {
  const { ports } = f;
  return [
    "server",
    ...f.dbFlags,
    // Every listener binds <server-hostname>:<port>.
    "--server-hostname=127.0.0.1",
    `--http-server-bindport=${ports.http}`,
    `--grpc-server-bindport=${ports.grpc}`,
    // Only opened with --message-broker-type=grpc; moved anyway so no default port is ever taken.
    `--grpc-broker-bindport=${ports.grpcBroker}`,
    `--metrics-server-bindport=${ports.metrics}`,
    `--health-check-server-bindport=${ports.health}`,
    "--enable-https=false",
    "--enable-jwt=false",
    "--enable-authz=false",
    "--grpc-authn-type=mock",
    "--message-broker-type=mqtt",
    `--message-broker-config-file=${f.brokerConfig}`,
    `--subscription-type=${f.subscriptionType}`,
    `--source-id=${MAESTRO_SOURCE_ID}`,
    `--client-id=${f.clientId}`,
    `-v=${f.verbosity}`,
  ];
}

/** Waits for the API, the instance's readiness and the MQTT subscription. */
async function waitReady(proc: ManagedProcess, apiUrl: string, healthUrl: string, timeoutMs: number) {
  await waitFor("maestro server API", () => httpOk(`${apiUrl}/api/maestro/v1`), {
    timeoutMs,
    exited: proc.exited,
  });
  // 200 once this instance is marked ready in server_instances (broadcast mode puts it on the hash ring then).
  await waitFor("maestro server instance", () => httpOk(healthUrl), { timeoutMs, exited: proc.exited });
  await waitFor("maestro server MQTT subscription", () => logContains(proc.logPath, SUBSCRIBED_LOG), {
    timeoutMs,
    exited: proc.exited,
  });
}

export async function startMaestroServer(opts: StartMaestroServerOptions): Promise<MaestroServer> {
  const bin = await maestroBinary();
  const pg = opts.postgres ?? defaultPostgres;
  const subscriptionType = opts.subscriptionType ?? "broadcast";
  await reapStaleDatabases(pg);
  const suffix = randomBytes(4).toString("hex");
  const database = databaseName(suffix);
  const dir = join(opts.workDir, `maestro-server-${suffix}`);
  await mkdir(dir, { recursive: true });
  await psql(pg, `CREATE DATABASE "${database}"`);
  const dropDatabase = () =>
    psql(pg, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).then(() => undefined);

  let proc: ManagedProcess | undefined;
  try {
    const dbFlags = await databaseFlags(dir, pg, database);
    const brokerConfig = join(dir, "mqtt.yaml");
    await writeFile(brokerConfig, mqttConfigYaml(opts.mqtt, "+"));
    const env = { ...process.env, MAESTRO_ENV: "development" };

    await exec(bin, ["migration", ...dbFlags, "-v=2"], { env, maxBuffer: 16 << 20 }).catch((err: unknown) => {
      const out = err as { stdout?: string; stderr?: string };
      throw new Error(`maestro migration failed: ${out.stderr ?? ""}${out.stdout ?? ""}`, { cause: err });
    });

    const ports = await serverPorts();
    const clientId = `maestro-${suffix}`;
    proc = await startProcess({
      name: `maestro-server-${suffix}`,
      command: bin,
      args: serverArgs({
        dbFlags,
        ports,
        brokerConfig,
        subscriptionType,
        clientId,
        verbosity: opts.verbosity ?? 2,
      }),
      dir: opts.workDir,
      env,
    });
    const started = proc;
    const apiUrl = `http://127.0.0.1:${ports.http}`;
    const healthUrl = `http://127.0.0.1:${ports.health}/healthcheck`;
    await waitReady(started, apiUrl, healthUrl, opts.startTimeoutMs ?? 60_000);

    const rest = maestroRestClient(apiUrl);
    const grpcAddress = `127.0.0.1:${ports.grpc}`;
    const server: MaestroServer = {
      apiUrl,
      grpcAddress,
      healthUrl,
      metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
      database,
      clientId,
      logPath: started.logPath,
      process: started,
      async createConsumer(name, labels) {
        const consumer = await rest.createConsumer(name, labels);
        // Return once this instance owns the consumer, so no status event of it is dropped.
        if (subscriptionType === "broadcast") await new Promise((r) => setTimeout(r, HASH_RING_SETTLE_MS));
        return consumer;
      },
      listConsumers: () => rest.listConsumers(),
      async createBundle(spec, id = randomUUID()) {
        await server.publish(bundleEvent("create_request", id, spec, 1));
        return id;
      },
      async updateBundle(id, spec, version = 0) {
        await server.publish(bundleEvent("update_request", id, spec, version));
      },
      getBundle: (id) => rest.getBundle(id),
      listBundles: (search) => rest.listBundles(search),
      deleteBundle: (id) => rest.deleteBundle(id),
      publish: (event) => grpcPublish(grpcAddress, event),
      async stop() {
        await started.stop();
        await dropDatabase();
      },
    };
    return server;
  } catch (err) {
    await proc?.stop();
    await dropDatabase().catch(() => undefined);
    throw err;
  }
}
