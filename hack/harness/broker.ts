/**
 * A real mosquitto for the local region, configured like the production broker Maestro designs
 * for (config/broker/ is the documented production configuration): MQTT 5 over TLS only, client
 * certificates as the identity (CN = MQTT username = client ID, so one certificate cannot take
 * over another's session), no anonymous access, no retained messages, a 512 KiB packet limit, and
 * an ACL that confines every consumer to its own topics while the maestro source may publish to
 * and read from all of them.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { userInfo } from "node:os";
import { join } from "node:path";
import { createCA, issueCert, type CertFiles, type CertificateAuthority } from "./certs.ts";
import { freePort, waitFor } from "./ports.ts";
import { bringDown, startProcess, type ManagedProcess, type RestartOptions } from "./process.ts";

/** The maestro-server's certificate CN, hence its MQTT username. */
export const SOURCE_IDENTITY = "maestro";
/** The production broker's packet limit, the one Maestro designs its payloads for. */
export const DEFAULT_MAX_PACKET_SIZE = 512 * 1024;
/** Debian's path is not on a non-root PATH; elsewhere (hack/install-deps.sh) PATH finds it. */
const MOSQUITTO = existsSync("/usr/sbin/mosquitto") ? "/usr/sbin/mosquitto" : "mosquitto";
/** Maestro's rule for consumer names; it also keeps `+`, `#` and `/` out of the ACL patterns. */
const IDENTITY_PATTERN = /^[a-z0-9-]+$/;

export interface BrokerCredentials {
  caPath: string;
  certPath: string;
  keyPath: string;
}

/** The flags our processes (operators/main.ts, maestro-agent/main.ts) take to reach the broker. */
export function brokerFlags(url: string, creds: BrokerCredentials): string[] {
  return [
    `--broker-url=${url}`,
    `--broker-ca=${creds.caPath}`,
    `--broker-cert=${creds.certPath}`,
    `--broker-key=${creds.keyPath}`,
  ];
}

export interface BrokerInfo {
  /** mqtts://127.0.0.1:<port> */
  url: string;
  host: string;
  port: number;
  caPath: string;
  /** The CA key, so test workers can issue client certificates of their own. */
  caKeyPath: string;
  dir: string;
}

export interface Broker extends BrokerInfo {
  logPath: string;
  /** Issues (or returns the already issued) client certificate with CN = identity. */
  credentials(identity: string): Promise<BrokerCredentials>;
  /**
   * Stops mosquitto (SIGKILL with `kill`) and starts it again on the same port with the same
   * config (broker-restart tests, chaos runs).
   */
  restart(opts?: RestartOptions): Promise<void>;
  stop(): Promise<void>;
}

export interface StartBrokerOptions {
  /** Region work dir: the pid file goes here (so a stale run is reaped), the rest in `<workDir>/broker/`. */
  workDir: string;
  maxPacketSize?: number;
  /** Default false, as in production; true only to test that the clients ignore retained replays. */
  retainAvailable?: boolean;
  startTimeoutMs?: number;
}

export function assertIdentity(identity: string): void {
  if (!IDENTITY_PATTERN.test(identity))
    throw new Error(`broker identity "${identity}" must match ${IDENTITY_PATTERN.source} (a consumer name)`);
}

/** Issues a client cert for `identity` signed by the broker CA into `dir` (usable from test workers given BrokerInfo). */
export async function issueBrokerCredentials(
  info: Pick<BrokerInfo, "caPath" | "caKeyPath">,
  dir: string,
  identity: string,
): Promise<BrokerCredentials> {
  assertIdentity(identity);
  const ca: CertificateAuthority = { name: "broker", certPath: info.caPath, keyPath: info.caKeyPath };
  const files = await issueCert(ca, dir, { name: identity, commonName: identity, usage: "client" });
  return { caPath: info.caPath, ...files };
}

/**
 * Topic rights. `pattern` lines apply to every client, wherever they stand, with %u = its username;
 * `topic` lines after `user maestro` apply to maestro only. Mosquitto 2.0's acl_file does not check
 * SUBSCRIBE at all (every filter is granted); it checks `read` per message at delivery against the
 * message's topic, so a `$share/<group>/…` subscription needs no ACL line of its own. A denied
 * PUBLISH is dropped and, at QoS 1, answered with PUBACK 0x87 (not authorized).
 */
export function aclFile(): string {
  const consumers = "sources/maestro/consumers";
  return [
    "# Each consumer reads only the events sent to it and writes only its own status events.",
    `pattern read ${consumers}/%u/sourceevents`,
    `pattern write ${consumers}/%u/agentevents`,
    "",
    "# The source sends to every consumer and reads every consumer's status events.",
    `user ${SOURCE_IDENTITY}`,
    `topic write ${consumers}/+/sourceevents`,
    `topic read ${consumers}/+/agentevents`,
    "",
  ].join("\n");
}

interface BrokerFiles {
  dir: string;
  ca: CertificateAuthority;
  configPath: string;
  logPath: string;
}

export interface BrokerLimits {
  maxPacketSize: number;
  retainAvailable: boolean;
}

/** The broker's configuration file; the security settings are those of config/broker/mosquitto.conf. */
export function mosquittoConf(
  files: Pick<BrokerFiles, "dir" | "ca" | "logPath">,
  server: CertFiles,
  port: number,
  limits: BrokerLimits,
): string {
  return [
    "per_listener_settings false",
    // Started as root, mosquitto would switch to the "mosquitto" user and lose access to our files.
    `user ${userInfo().username}`,
    "persistence false",
    `max_packet_size ${limits.maxPacketSize}`,
    // A retained event would reach every later subscriber as if it were live; a PUBLISH with the
    // retain flag costs its sender the connection (DISCONNECT 0x9A).
    `retain_available ${limits.retainAvailable}`,
    "allow_anonymous false",
    `acl_file ${join(files.dir, "acl")}`,
    `log_dest file ${files.logPath}`,
    "log_type error",
    "log_type warning",
    "log_type notice",
    "log_type information",
    "connection_messages true",
    "log_timestamp_format %Y-%m-%dT%H:%M:%S",
    "",
    `listener ${port} 127.0.0.1`,
    `cafile ${files.ca.certPath}`,
    `certfile ${server.certPath}`,
    `keyfile ${server.keyPath}`,
    "require_certificate true",
    "use_identity_as_username true",
    // The broker replaces whatever client ID a client sends with its CN: a client ID names a
    // session, and a second CONNECT with it would otherwise drop the first holder.
    "use_username_as_clientid true",
    "",
  ].join("\n");
}

async function createFiles(workDir: string, port: number, limits: BrokerLimits): Promise<BrokerFiles> {
  const dir = join(workDir, "broker");
  await mkdir(join(dir, "clients"), { recursive: true });
  const ca = await createCA(dir, "broker");
  const server = await issueCert(ca, dir, {
    name: "server",
    commonName: "mosquitto",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const files = { dir, ca, configPath: join(dir, "mosquitto.conf"), logPath: join(dir, "mosquitto.log") };
  await writeFile(join(dir, "acl"), aclFile());
  await writeFile(files.configPath, mosquittoConf(files, server, port, limits));
  return files;
}

/**
 * Whether something accepts TCP connections on 127.0.0.1:port. Mosquitto binds only after loading
 * its certificates; each probe costs one "unexpected eof" line in its log.
 */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

export async function startBroker(opts: StartBrokerOptions): Promise<Broker> {
  const port = await freePort();
  const files = await createFiles(opts.workDir, port, {
    maxPacketSize: opts.maxPacketSize ?? DEFAULT_MAX_PACKET_SIZE,
    retainAvailable: opts.retainAvailable ?? false,
  });

  const launch = async (): Promise<ManagedProcess> => {
    const proc = await startProcess({
      name: "mosquitto",
      command: MOSQUITTO,
      args: ["-c", files.configPath],
      dir: opts.workDir,
    });
    await waitFor("mosquitto", () => accepts(port), {
      timeoutMs: opts.startTimeoutMs ?? 15_000,
      intervalMs: 50,
      exited: proc.exited,
    });
    return proc;
  };

  const issued = new Map<string, Promise<BrokerCredentials>>();
  const info: BrokerInfo = {
    url: `mqtts://127.0.0.1:${port}`,
    host: "127.0.0.1",
    port,
    caPath: files.ca.certPath,
    caKeyPath: files.ca.keyPath,
    dir: files.dir,
  };
  let current = await launch();
  return {
    ...info,
    logPath: files.logPath,
    credentials: (identity) => {
      let creds = issued.get(identity);
      if (!creds) {
        creds = issueBrokerCredentials(info, join(files.dir, "clients"), identity);
        // A failed issue (e.g. a bad identity) is not remembered.
        creds.catch(() => issued.delete(identity));
        issued.set(identity, creds);
      }
      return creds;
    },
    restart: async (restartOpts) => {
      await bringDown(current, restartOpts);
      current = await launch();
    },
    stop: () => current.stop(),
  };
}
