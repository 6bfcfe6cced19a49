/**
 * The real Maestro (github.com/openshift-online/maestro, built by hack/build-maestro.sh) for the
 * interoperability tests: a `maestro server` on a fresh PostgreSQL database and `maestro agent`s,
 * both talking MQTT 5 over TLS to the region's mosquitto, every port on 127.0.0.1.
 *
 * Bundles are created and updated the way Maestro's own clients do it, through the gRPC
 * CloudEventService/Publish of the server (its REST API only lists, gets and deletes them). The call
 * is made here with node:http2 and a small protobuf encoder for the four messages involved, so no
 * gRPC package is needed; the shapes are those of open-cluster-management.io/sdk-go
 * pkg/cloudevents/generic/options/grpc/protobuf/v1/cloudevent.proto (package io.cloudevents.v1).
 */
import { execFile } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { connect } from "node:http2";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort, waitFor } from "./ports.ts";
import { isAlive, startProcess, type ManagedProcess } from "./process.ts";

const exec = promisify(execFile);
const buildScript = fileURLToPath(new URL("../build-maestro.sh", import.meta.url));

/** The server's source ID (its default `--source-id`); also the first topic level after `sources/`. */
export const MAESTRO_SOURCE_ID = "maestro";
/** CloudEvents data type of every bundle event. */
export const MANIFEST_BUNDLE_TYPE = "io.open-cluster-management.works.v1alpha1.manifestbundles";
/** Logged (at every verbosity) by both server and agent once their MQTT SUBSCRIBE is acknowledged. */
const SUBSCRIBED_LOG = "subscribed to mqtt broker";
const DB_PREFIX = "maestro_";
/**
 * In broadcast mode a server instance joins the hash ring, and takes the consumers the ring gives it,
 * only on a 5 s tick (hard-coded in cmd/maestro/servecmd); status events of a consumer it does not
 * own yet are dropped ("skipping resource status update as it is not owned by the current instance")
 * and recovered only by the status resync it sends once it owns the consumer.
 */
const HASH_RING_SETTLE_MS = 5_500;

let binary: Promise<string> | undefined;

/** Runs hack/build-maestro.sh (a no-op once cached; honours MAESTRO_BIN) and returns the binary path. */
export function maestroBinary(): Promise<string> {
  binary ??= exec("bash", [buildScript], { maxBuffer: 64 << 20, env: process.env }).then(({ stdout }) => {
    const dir = stdout.trim().split("\n").pop();
    if (!dir) throw new Error("hack/build-maestro.sh printed no directory");
    return join(dir, "maestro");
  });
  binary.catch(() => (binary = undefined));
  return binary;
}

export interface MaestroMqttConfig {
  /** host:port of the broker (TLS). */
  brokerHost: string;
  caPath: string;
  certPath: string;
  keyPath: string;
}

export interface PostgresConnection {
  host: string;
  port: number;
  /** A superuser reachable without a password (trust auth), as on the dev machines and in CI. */
  user: string;
}

const defaultPostgres: PostgresConnection = { host: "127.0.0.1", port: 5432, user: "postgres" };

export interface MaestroConsumer {
  id: string;
  name: string;
  labels?: Record<string, string>;
}

export interface BundleSpec {
  /** Consumer name (= MQTT topic segment, `[a-z0-9-]+`). */
  consumer: string;
  manifests: object[];
  deleteOption?: object;
  manifestConfigs?: object[];
  /** Kubernetes ObjectMeta of the bundle (labels, annotations); Maestro forces `name` to the bundle id. */
  metadata?: Record<string, unknown>;
}

/** What GET /api/maestro/v1/resource-bundles/{id} returns (snake_case, as Maestro serves it). */
export interface ResourceBundle {
  id: string;
  kind: "ResourceBundle";
  href: string;
  name: string;
  consumer_name: string;
  version: number;
  created_at: string;
  updated_at: string;
  deleted_at?: string;
  metadata?: Record<string, unknown>;
  manifests?: object[];
  delete_option?: object;
  manifest_configs?: object[];
  /** ManifestBundleStatus as last reported by the agent: conditions, resourceStatus, ObservedVersion, SequenceID. */
  status?: {
    ObservedVersion?: number;
    SequenceID?: string;
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string }>;
    resourceStatus?: object[];
  };
}

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

function psql(pg: PostgresConnection, sql: string): Promise<string> {
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

/** Drops the databases of harness processes that died without stopping their server. */
async function reapStaleDatabases(pg: PostgresConnection): Promise<void> {
  const names = (await psql(pg, `SELECT datname FROM pg_database WHERE datname LIKE '${DB_PREFIX}%'`)).split(
    "\n",
  );
  for (const name of names) {
    const owner = /^maestro_(\d+)_[0-9a-f]+$/.exec(name.trim());
    if (!owner || isAlive(Number(owner[1]))) continue;
    await psql(pg, `DROP DATABASE IF EXISTS "${name.trim()}" WITH (FORCE)`).catch(() => undefined);
  }
}

function mqttConfigYaml(mqtt: MaestroMqttConfig, consumer: string): string {
  // Parsed by sdk-go with gopkg.in/yaml.v2; JSON is valid YAML and needs no quoting rules.
  const topics = `sources/${MAESTRO_SOURCE_ID}/consumers/${consumer}`;
  return JSON.stringify(
    {
      brokerHost: mqtt.brokerHost,
      caFile: mqtt.caPath,
      clientCertFile: mqtt.certPath,
      clientKeyFile: mqtt.keyPath,
      topics: { sourceEvents: `${topics}/sourceevents`, agentEvents: `${topics}/agentevents` },
    },
    null,
    2,
  );
}

async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await res.body?.cancel();
  return res.ok;
}

async function logContains(path: string, text: string): Promise<boolean> {
  return (await readFile(path, "utf8")).includes(text);
}

async function api<T>(
  method: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; json: T | undefined }> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as T) : undefined;
  return { status: res.status, json };
}

function apiError(what: string, status: number, json: unknown): Error {
  return new Error(`maestro ${what}: HTTP ${status} ${JSON.stringify(json)}`);
}

export async function startMaestroServer(opts: StartMaestroServerOptions): Promise<MaestroServer> {
  const bin = await maestroBinary();
  const pg = opts.postgres ?? defaultPostgres;
  const subscriptionType = opts.subscriptionType ?? "broadcast";
  await reapStaleDatabases(pg);
  const suffix = randomBytes(4).toString("hex");
  const database = `${DB_PREFIX}${process.pid}_${suffix}`;
  const dir = join(opts.workDir, `maestro-server-${suffix}`);
  await mkdir(dir, { recursive: true });
  await psql(pg, `CREATE DATABASE "${database}"`);
  const dropDatabase = () =>
    psql(pg, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).then(() => undefined);

  let proc: ManagedProcess | undefined;
  try {
    // Maestro reads its database settings from files only; relative paths would resolve against the
    // directory it was compiled in, so every path is absolute.
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
    const brokerConfig = join(dir, "mqtt.yaml");
    await writeFile(brokerConfig, mqttConfigYaml(opts.mqtt, "+"));
    const env = { ...process.env, MAESTRO_ENV: "development" };

    await exec(bin, ["migration", ...dbFlags, "-v=2"], { env, maxBuffer: 16 << 20 }).catch((err: unknown) => {
      const out = err as { stdout?: string; stderr?: string };
      throw new Error(`maestro migration failed: ${out.stderr ?? ""}${out.stdout ?? ""}`, { cause: err });
    });

    const [http, grpc, grpcBroker, metrics, health] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const clientId = `maestro-${suffix}`;
    proc = await startProcess({
      name: `maestro-server-${suffix}`,
      command: bin,
      args: [
        "server",
        ...dbFlags,
        // Every listener binds <server-hostname>:<port>.
        "--server-hostname=127.0.0.1",
        `--http-server-bindport=${http}`,
        `--grpc-server-bindport=${grpc}`,
        // Only opened with --message-broker-type=grpc; moved anyway so no default port is ever taken.
        `--grpc-broker-bindport=${grpcBroker}`,
        `--metrics-server-bindport=${metrics}`,
        `--health-check-server-bindport=${health}`,
        "--enable-https=false",
        "--enable-jwt=false",
        "--enable-authz=false",
        "--grpc-authn-type=mock",
        "--message-broker-type=mqtt",
        `--message-broker-config-file=${brokerConfig}`,
        `--subscription-type=${subscriptionType}`,
        `--source-id=${MAESTRO_SOURCE_ID}`,
        `--client-id=${clientId}`,
        `-v=${opts.verbosity ?? 2}`,
      ],
      dir: opts.workDir,
      env,
    });
    const started = proc;
    const apiUrl = `http://127.0.0.1:${http}`;
    const healthUrl = `http://127.0.0.1:${health}/healthcheck`;
    const timeoutMs = opts.startTimeoutMs ?? 60_000;
    await waitFor("maestro server API", () => httpOk(`${apiUrl}/api/maestro/v1`), {
      timeoutMs,
      exited: started.exited,
    });
    // 200 once this instance is marked ready in server_instances (broadcast mode puts it on the hash ring then).
    await waitFor("maestro server instance", () => httpOk(healthUrl), { timeoutMs, exited: started.exited });
    await waitFor("maestro server MQTT subscription", () => logContains(started.logPath, SUBSCRIBED_LOG), {
      timeoutMs,
      exited: started.exited,
    });

    const v1 = `${apiUrl}/api/maestro/v1`;
    const grpcAddress = `127.0.0.1:${grpc}`;
    const server: MaestroServer = {
      apiUrl,
      grpcAddress,
      healthUrl,
      metricsUrl: `http://127.0.0.1:${metrics}/metrics`,
      database,
      clientId,
      logPath: started.logPath,
      process: started,
      async createConsumer(name, labels) {
        const { status, json } = await api<MaestroConsumer>("POST", `${v1}/consumers`, {
          name,
          ...(labels ? { labels } : {}),
        });
        if (status !== 201 || !json) throw apiError(`create consumer ${name}`, status, json);
        // Return once this instance owns the consumer, so no status event of it is dropped.
        if (subscriptionType === "broadcast") await new Promise((r) => setTimeout(r, HASH_RING_SETTLE_MS));
        return json;
      },
      async listConsumers() {
        const { status, json } = await api<{ items: MaestroConsumer[] }>("GET", `${v1}/consumers?size=-1`);
        if (status !== 200 || !json) throw apiError("list consumers", status, json);
        return json.items;
      },
      async createBundle(spec, id = randomUUID()) {
        await server.publish(bundleEvent("create_request", id, spec, 1));
        return id;
      },
      async updateBundle(id, spec, version = 0) {
        await server.publish(bundleEvent("update_request", id, spec, version));
      },
      async getBundle(id) {
        const { status, json } = await api<ResourceBundle>(
          "GET",
          `${v1}/resource-bundles/${encodeURIComponent(id)}`,
        );
        if (status === 404) return undefined;
        if (status !== 200 || !json) throw apiError(`get bundle ${id}`, status, json);
        return json;
      },
      async listBundles(search) {
        const query = new URLSearchParams({ size: "-1", ...(search ? { search } : {}) });
        const { status, json } = await api<{ items: ResourceBundle[] }>(
          "GET",
          `${v1}/resource-bundles?${query.toString()}`,
        );
        if (status !== 200 || !json) throw apiError("list bundles", status, json);
        return json.items;
      },
      async deleteBundle(id) {
        const { status, json } = await api<unknown>(
          "DELETE",
          `${v1}/resource-bundles/${encodeURIComponent(id)}`,
        );
        if (status !== 204 && status !== 404) throw apiError(`delete bundle ${id}`, status, json);
      },
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

export interface MaestroAgent {
  consumer: string;
  /** MQTT client ID is `<clientId>-client`; also the CloudEvent `source` of its events. */
  clientId: string;
  logPath: string;
  readonly process: ManagedProcess;
  stop(): Promise<void>;
}

export interface StartMaestroAgentOptions {
  workDir: string;
  /** Consumer name: `[a-z0-9-]+`, and the CN of the agent's certificate under the region's broker ACL. */
  consumer: string;
  /** Admin kubeconfig of the cluster the agent applies to; it needs the AppliedManifestWork CRD. */
  kubeconfigPath: string;
  mqtt: MaestroMqttConfig;
  /** Interval of the agent's status feedback sync (OCM default 10s). Default 2s, for quick tests. */
  statusSyncInterval?: string;
  verbosity?: number;
  startTimeoutMs?: number;
}

export async function startMaestroAgent(opts: StartMaestroAgentOptions): Promise<MaestroAgent> {
  if (!/^[a-z0-9-]+$/.test(opts.consumer))
    throw new Error(`consumer "${opts.consumer}" must match [a-z0-9-]+`);
  const bin = await maestroBinary();
  const suffix = randomBytes(4).toString("hex");
  const dir = join(opts.workDir, `maestro-agent-${opts.consumer}-${suffix}`);
  const tmp = join(dir, "tmp");
  await mkdir(tmp, { recursive: true });
  const config = join(dir, "mqtt.yaml");
  await writeFile(config, mqttConfigYaml(opts.mqtt, opts.consumer));
  const listen = await freePort();
  const clientId = `${opts.consumer}-work-agent`;
  const proc = await startProcess({
    name: `maestro-agent-${opts.consumer}-${suffix}`,
    command: bin,
    args: [
      "agent",
      `--consumer-name=${opts.consumer}`,
      "--workload-source-driver=mqtt",
      `--workload-source-config=${config}`,
      `--cloudevents-client-id=${clientId}`,
      `--kubeconfig=${opts.kubeconfigPath}`,
      // Only names where events would go; the agent creates nothing there and needs no namespace.
      "--namespace=maestro-agent",
      // library-go's HTTPS endpoint (metrics, healthz) with a self-signed cert, default 0.0.0.0:8443.
      `--listen=127.0.0.1:${listen}`,
      "--disable-leader-election=true",
      `--status-sync-interval=${opts.statusSyncInterval ?? "2s"}`,
      `-v=${opts.verbosity ?? 2}`,
    ],
    dir: opts.workDir,
    // The self-signed serving certificate goes to os.MkdirTemp: keep it inside the work dir.
    env: { ...process.env, TMPDIR: tmp },
  });
  try {
    await waitFor("maestro agent MQTT subscription", () => logContains(proc.logPath, SUBSCRIBED_LOG), {
      timeoutMs: opts.startTimeoutMs ?? 60_000,
      exited: proc.exited,
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { consumer: opts.consumer, clientId, logPath: proc.logPath, process: proc, stop: () => proc.stop() };
}

// ---------------------------------------------------------------------------------------------
// gRPC CloudEventService/Publish over node:http2.

/**
 * One CloudEvent in the protobuf format of sdk-go's grpc protocol binding: `attributes` keys are the
 * binding's: "contenttype" (datacontenttype, no prefix) and "ce-<name>" for every other optional
 * attribute and extension ("ce-time", "ce-clustername", "ce-resourceid", "ce-resourceversion", …).
 * Numbers travel as ce_integer (int32), Dates as ce_timestamp, strings as ce_string.
 */
export interface GrpcCloudEvent {
  id: string;
  source: string;
  type: string;
  attributes: Record<string, string | number | boolean | Date>;
  /** JSON-encoded into binary_data. */
  data?: unknown;
}

/** The source the harness publishes bundles as (stored as the resource's `source`). */
export const GRPC_SOURCE = "hcp-interop";

function bundleEvent(action: string, id: string, spec: BundleSpec, version: number): GrpcCloudEvent {
  const data: Record<string, unknown> = { manifests: spec.manifests };
  if (spec.deleteOption) data.deleteOption = spec.deleteOption;
  if (spec.manifestConfigs) data.manifestConfigs = spec.manifestConfigs;
  const attributes: GrpcCloudEvent["attributes"] = {
    contenttype: "application/json",
    "ce-time": new Date(),
    "ce-clustername": spec.consumer,
    "ce-resourceid": id,
    "ce-resourceversion": version,
  };
  if (spec.metadata)
    attributes["ce-metadata"] = JSON.stringify({ ...spec.metadata, name: id, namespace: spec.consumer });
  return {
    id: randomUUID(),
    source: GRPC_SOURCE,
    type: `${MANIFEST_BUNDLE_TYPE}.spec.${action}`,
    attributes,
    data,
  };
}

function varint(value: number | bigint): Buffer {
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n; // int32/int64 negatives are ten-byte two's complement
  const out: number[] = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return Buffer.from(out);
}

const tag = (field: number, wireType: 0 | 2) => varint((field << 3) | wireType);
const lengthDelimited = (field: number, bytes: Buffer) =>
  Buffer.concat([tag(field, 2), varint(bytes.length), bytes]);
const stringField = (field: number, s: string) => lengthDelimited(field, Buffer.from(s, "utf8"));
const varintField = (field: number, n: number | bigint) => Buffer.concat([tag(field, 0), varint(n)]);

/** CloudEventAttributeValue: oneof attr { bool ce_boolean = 1; int32 ce_integer = 2; string ce_string = 3; …; Timestamp ce_timestamp = 7 } */
function attributeValue(value: string | number | boolean | Date): Buffer {
  if (typeof value === "boolean") return varintField(1, value ? 1 : 0);
  if (typeof value === "number") {
    if (!Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31)
      throw new Error(`${value} is not an int32`);
    return varintField(2, value);
  }
  if (value instanceof Date) {
    const ms = value.getTime();
    const seconds = Math.floor(ms / 1000);
    // google.protobuf.Timestamp { int64 seconds = 1; int32 nanos = 2; }
    return lengthDelimited(
      7,
      Buffer.concat([varintField(1, seconds), varintField(2, (ms - seconds * 1000) * 1_000_000)]),
    );
  }
  return stringField(3, value);
}

/** CloudEvent { id = 1; source = 2; spec_version = 3; type = 4; map<string, CloudEventAttributeValue> attributes = 5; bytes binary_data = 6 } */
export function encodeCloudEvent(event: GrpcCloudEvent): Buffer {
  const parts = [
    stringField(1, event.id),
    stringField(2, event.source),
    stringField(3, "1.0"),
    stringField(4, event.type),
  ];
  for (const [key, value] of Object.entries(event.attributes)) {
    parts.push(
      lengthDelimited(5, Buffer.concat([stringField(1, key), lengthDelimited(2, attributeValue(value))])),
    );
  }
  if (event.data !== undefined)
    parts.push(lengthDelimited(6, Buffer.from(JSON.stringify(event.data), "utf8")));
  return Buffer.concat(parts);
}

/** Unary call /io.cloudevents.v1.CloudEventService/Publish(PublishRequest { CloudEvent event = 1; }) → google.protobuf.Empty. */
export async function grpcPublish(address: string, event: GrpcCloudEvent, timeoutMs = 30_000): Promise<void> {
  const message = lengthDelimited(1, encodeCloudEvent(event));
  const frame = Buffer.alloc(5 + message.length); // gRPC message prefix: uncompressed flag, big-endian length
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  const session = connect(`http://${address}`);
  try {
    const { status, detail } = await new Promise<{ status: number | undefined; detail: string }>(
      (resolve, reject) => {
        session.once("error", reject);
        const req = session.request({
          ":method": "POST",
          ":path": "/io.cloudevents.v1.CloudEventService/Publish",
          "content-type": "application/grpc",
          te: "trailers",
        });
        req.setTimeout(timeoutMs, () => req.close());
        let status: number | undefined;
        let detail = "";
        // A failed call may answer "trailers-only" (grpc-status in the response headers).
        const take = (headers: Record<string, unknown>) => {
          if (headers["grpc-status"] !== undefined) status = Number(headers["grpc-status"]);
          if (typeof headers["grpc-message"] === "string")
            detail = decodeURIComponent(headers["grpc-message"]);
        };
        req.on("response", take);
        req.on("trailers", take);
        req.on("data", () => undefined);
        req.once("error", reject);
        req.once("close", () => resolve({ status, detail }));
        req.end(frame);
      },
    );
    if (status !== 0)
      throw new Error(`maestro gRPC Publish ${event.type}: status ${status ?? "none"} ${detail}`);
  } finally {
    session.close();
  }
}
