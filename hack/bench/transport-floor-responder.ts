/**
 * The transport floor's responder for one consumer, a process of its own as an agent is: a raw
 * MQTT client that answers every spec event on the consumer's topic with an Applied status event,
 * at once and without any apiserver, in the same encoding and QoS our agent uses. What it costs is
 * what any agent must pay at least to take a bundle and say it is applied.
 *
 *   node hack/bench/transport-floor-responder.ts --consumer=<name> --broker-url=mqtts://… \
 *     --broker-ca=<pem> --broker-cert=<pem> --broker-key=<pem>
 *
 * Prints "ready" once subscribed; exits on SIGTERM, or with status 1 when the connection is lost.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import mqtt from "mqtt";
import type { ManifestWorkStatus, WorkCondition } from "../../operators/api/work/v1.ts";
import { decodeSpecEvent, encodeStatusEvent } from "../../operators/cloudevents/codec/manifestbundle.ts";
import { SnowflakeGenerator } from "../../operators/cloudevents/codec/snowflake.ts";
import { statusHash } from "../../operators/cloudevents/codec/statushash.ts";
import { fromMessage, toBinaryMessage } from "../../operators/cloudevents/transport/mqtt.ts";
import { Action, topics } from "../../operators/cloudevents/types.ts";

const { values } = parseArgs({
  options: {
    consumer: { type: "string" },
    "broker-url": { type: "string" },
    "broker-ca": { type: "string" },
    "broker-cert": { type: "string" },
    "broker-key": { type: "string" },
  },
});
const need = (key: keyof typeof values): string => {
  const v = values[key];
  if (!v) throw new Error(`--${key} is required`);
  return v;
};
const consumer = need("consumer");

function conditions(generation: number, now: string): WorkCondition[] {
  const common = { observedGeneration: generation, lastTransitionTime: now };
  return [
    {
      type: "Applied",
      status: "True",
      reason: "AppliedManifestComplete",
      message: "Apply manifest complete",
      ...common,
    },
    {
      type: "Available",
      status: "True",
      reason: "ResourceAvailable",
      message: "Resource is available",
      ...common,
    },
  ];
}

/** The status our agent reports for a bundle applied without trouble: the work's and each manifest's. */
function appliedStatus(manifests: unknown[], generation: number): ManifestWorkStatus {
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  return {
    conditions: conditions(generation, now),
    resourceStatus: {
      manifests: manifests.map((m, ordinal) => {
        const {
          apiVersion = "",
          kind,
          metadata,
        } = m as {
          apiVersion?: string;
          kind?: string;
          metadata?: { name?: string; namespace?: string };
        };
        const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
        return {
          resourceMeta: {
            ordinal,
            group,
            version,
            kind,
            resource: `${kind?.toLowerCase()}s`,
            name: metadata?.name,
            namespace: metadata?.namespace,
          },
          conditions: conditions(generation, now),
        };
      }),
    },
  };
}

const client = mqtt.connect(need("broker-url"), {
  protocolVersion: 5,
  clientId: `${consumer}-floor`,
  clean: true,
  reconnectPeriod: 0,
  ca: readFileSync(need("broker-ca")),
  cert: readFileSync(need("broker-cert")),
  key: readFileSync(need("broker-key")),
  rejectUnauthorized: true,
});
const sequence = new SnowflakeGenerator();
const agentId = `${consumer}-floor-responder`;
const statusTopic = topics.agentEvents(consumer);
let failures = 0;
let stopping = false;

client.on("message", (_topic, _payload, packet) => {
  try {
    const work = decodeSpecEvent(fromMessage(packet), consumer);
    const status = appliedStatus(work.spec.workload?.manifests ?? [], work.generation);
    const event = encodeStatusEvent(work, status, {
      agentId,
      sequenceId: sequence.next(),
      statusHash: statusHash(status),
      action: Action.update,
    });
    const { payload, options } = toBinaryMessage(event);
    // Not awaited: answers go out as fast as bundles come in, QoS 1 acknowledged by the broker.
    client.publish(statusTopic, payload, options, (err) => {
      // At SIGTERM the forced close fails the acknowledgements still due; those are not failures.
      if (err && !stopping && failures++ < 10) console.error(`publish failed: ${err.message}`);
    });
  } catch (err) {
    if (failures++ < 10) console.error(`spec event refused: ${String(err)}`);
  }
});
client.on("connect", () => {
  client.subscribe(topics.sourceEvents(consumer), { qos: 1 }, (err) => {
    if (err) {
      console.error(`subscribe failed: ${err.message}`);
      process.exit(1);
    }
    console.log("ready");
  });
});
client.on("error", (err) => console.error(`mqtt: ${err.message}`));
client.on("close", () => {
  if (!stopping) {
    console.error("connection to the broker lost");
    process.exit(1);
  }
});
process.on("SIGTERM", () => {
  stopping = true;
  client.end(true, {}, () => process.exit(0));
});
