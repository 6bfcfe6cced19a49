/**
 * Bundles are created and updated the way Maestro's own clients do it, through the gRPC
 * CloudEventService/Publish of the server (its REST API only lists, gets and deletes them). The call
 * is made here with node:http2 and a small protobuf encoder for the four messages involved, so no
 * gRPC package is needed; the shapes are those of open-cluster-management.io/sdk-go
 * pkg/cloudevents/generic/options/grpc/protobuf/v1/cloudevent.proto (package io.cloudevents.v1).
 */
import { randomUUID } from "node:crypto";
import { connect } from "node:http2";

/** CloudEvents data type of every bundle event. */
export const MANIFEST_BUNDLE_TYPE = "io.open-cluster-management.works.v1alpha1.manifestbundles";

export interface BundleSpec {
  /** Consumer name (= MQTT topic segment, `[a-z0-9-]+`). */
  consumer: string;
  manifests: object[];
  deleteOption?: object;
  manifestConfigs?: object[];
  /** Kubernetes ObjectMeta of the bundle (labels, annotations); Maestro forces `name` to the bundle id. */
  metadata?: Record<string, unknown>;
}

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

export function bundleEvent(action: string, id: string, spec: BundleSpec, version: number): GrpcCloudEvent {
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
