/**
 * A real `maestro agent` for one consumer, applying to a cluster of the region and talking MQTT 5
 * over TLS to the region's broker.
 */
import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { freePort, waitFor } from "../ports.ts";
import { startProcess, type ManagedProcess } from "../process.ts";
import {
  SUBSCRIBED_LOG,
  logContains,
  maestroBinary,
  mqttConfigYaml,
  type MaestroMqttConfig,
} from "./process.ts";

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
