/**
 * What the Maestro server and agent processes share: the binary (built by hack/build-maestro.sh),
 * their MQTT configuration file, and the readiness evidence both log and serve.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const exec = promisify(execFile);
const buildScript = fileURLToPath(new URL("../../build-maestro.sh", import.meta.url));

/** The server's source ID (its default `--source-id`); also the first topic level after `sources/`. */
export const MAESTRO_SOURCE_ID = "maestro";
/** Logged (at every verbosity) by both server and agent once their MQTT SUBSCRIBE is acknowledged. */
export const SUBSCRIBED_LOG = "subscribed to mqtt broker";

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

export function mqttConfigYaml(mqtt: MaestroMqttConfig, consumer: string): string {
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

export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await res.body?.cancel();
  return res.ok;
}

export async function logContains(path: string, text: string): Promise<boolean> {
  return (await readFile(path, "utf8")).includes(text);
}
