/**
 * The transport scenario's floor: the same bundles through the same kind of mosquitto with nothing
 * behind either end. A raw MQTT client in the bench process publishes each bundle's spec event (the
 * bytes our server would send for its ManifestWork: encodeSpecEvent, binary mode, QoS 1, the
 * consumer's sourceevents topic) and counts it back when the consumer's status event says Applied;
 * one responder process per consumer (transport-floor-responder.ts) answers each event at once,
 * without an apiserver or an apply. The publisher lives in the bench process so that no hop of IPC
 * is charged to the floor; its CPU and RSS are the bench process's.
 */
import { randomUUID } from "node:crypto";
import { copyFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import mqtt, { type MqttClient } from "mqtt";
import type { ManifestWork } from "../../operators/api/work/v1.ts";
import { decodeStatusEvent, encodeSpecEvent } from "../../operators/cloudevents/codec/manifestbundle.ts";
import { fromMessage, toBinaryMessage } from "../../operators/cloudevents/transport/mqtt.ts";
import { Action, topics } from "../../operators/cloudevents/types.ts";
import { brokerFlags, type BrokerCredentials } from "../harness/broker.ts";
import { waitFor } from "../harness/ports.ts";
import { startProcess, type ManagedProcess } from "../harness/process.ts";
import type { Region } from "../harness/region.ts";
import type { AgentSide, Component, ServerSide, SideOptions } from "./transport-sides.ts";
import { configMap } from "./transport-sides.ts";

const responderScript = fileURLToPath(new URL("./transport-floor-responder.ts", import.meta.url));

function brokerOf(region: Region) {
  if (!region.broker) throw new Error("the region has no broker");
  return region.broker;
}

async function connect(url: string, creds: BrokerCredentials): Promise<MqttClient> {
  const client = await mqtt.connectAsync(url, {
    protocolVersion: 5,
    clientId: "maestro-floor",
    clean: true,
    reconnectPeriod: 0,
    ca: await readFile(creds.caPath),
    cert: await readFile(creds.certPath),
    key: await readFile(creds.keyPath),
    rejectUnauthorized: true,
  });
  return client;
}

/** The work our server would hold for bundle `i`, as the service apiserver would have filled it in. */
function workFor(uid: string, consumer: string, i: number, namespace: string): ManifestWork {
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: {
      name: `bench-${i}`,
      namespace: consumer,
      uid,
      generation: 1,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    },
    spec: { workload: { manifests: [configMap(i, namespace)] } },
  };
}

/** The raw publisher, with the maestro source's identity (the ACL lets it write every consumer's topic). */
export async function startRawServer(opts: SideOptions): Promise<ServerSide> {
  const broker = brokerOf(opts.region);
  const client = await connect(broker.url, await broker.credentials("maestro"));
  const handlers: Array<(key: string) => void> = [];
  let refused = 0;
  client.on("message", (_topic, _payload, packet) => {
    try {
      const status = decodeStatusEvent(fromMessage(packet));
      const applied = status.status.conditions?.find((c) => c.type === "Applied");
      if (status.resourceVersion !== 1 || applied?.status !== "True") return;
      for (const h of handlers) h(status.resourceId);
    } catch (err) {
      if (refused++ < 10) process.stderr.write(`[floor] status event refused: ${String(err)}\n`);
    }
  });
  await client.subscribeAsync(topics.allAgentEvents(), { qos: 1 });
  return {
    components: [{ name: "publisher (bench process)", pid: process.pid }],
    keyFor: () => randomUUID(),
    async submit(key, consumer, i, namespace) {
      const { payload, options } = toBinaryMessage(
        encodeSpecEvent(workFor(key, consumer, i, namespace), Action.create),
      );
      await client.publishAsync(topics.sourceEvents(consumer), payload, options);
    },
    onApplied: (h) => handlers.push(h),
    async stop() {
      await client.endAsync(true);
    },
  };
}

async function startResponder(opts: SideOptions, consumer: string): Promise<ManagedProcess> {
  const broker = brokerOf(opts.region);
  const name = `floor-responder-${consumer}`;
  const proc = await startProcess({
    name,
    command: process.execPath,
    args: [
      responderScript,
      `--consumer=${consumer}`,
      ...brokerFlags(broker.url, await broker.credentials(consumer)),
    ],
    dir: opts.region.workDir,
  });
  const stop = async (): Promise<void> => {
    await proc.stop();
    await mkdir(opts.logDir, { recursive: true });
    await copyFile(proc.logPath, join(opts.logDir, `${name}.log`));
  };
  try {
    await waitFor(`${name} ready`, async () => (await readFile(proc.logPath, "utf8")).includes("ready"), {
      timeoutMs: 30_000,
      exited: proc.exited,
    });
  } catch (err) {
    const log = await readFile(proc.logPath, "utf8").catch(() => "");
    await stop();
    throw new Error(`${String(err)}\n${log.slice(-2_000)}`, { cause: err });
  }
  return { ...proc, stop };
}

/** One responder process per consumer. */
export async function startRawAgents(opts: SideOptions): Promise<AgentSide> {
  const procs: ManagedProcess[] = [];
  const components: Component[] = [];
  const stopAll = async (): Promise<void> => void (await Promise.all(procs.map((p) => p.stop())));
  try {
    for (const consumer of opts.consumers) {
      const proc = await startResponder(opts, consumer);
      procs.push(proc);
      components.push({ name: `agent ${consumer}`, pid: proc.pid });
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return { components, stop: stopAll };
}
