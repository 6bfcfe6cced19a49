/**
 * A long-lived gRPC client of the real Maestro server's CloudEventService, as Maestro's own source
 * clients use it: Publish for bundle specs over one HTTP/2 session (the interop harness opens a
 * session per call, which would charge connection set-up to the real Maestro's figures), and the
 * Subscribe stream that pushes every status the server stores, so that status-back is seen when the
 * server publishes it rather than at the next poll.
 */
import { connect, type ClientHttp2Session } from "node:http2";
import { encodeCloudEvent, type GrpcCloudEvent } from "../harness/maestro/index.ts";

const SERVICE = "/io.cloudevents.v1.CloudEventService";

/** A CloudEvent as it arrives on the Subscribe stream (only the parts the bench reads). */
export interface ReceivedCloudEvent {
  id: string;
  source: string;
  type: string;
  attributes: Map<string, string | number | boolean>;
  /** binary_data or text_data, as text (JSON for bundle statuses). */
  data: string | undefined;
}

function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

function varintBytes(value: number): Buffer {
  const out: number[] = [];
  let v = value;
  do {
    let byte = v & 0x7f;
    v = Math.floor(v / 128);
    if (v) byte |= 0x80;
    out.push(byte);
  } while (v);
  return Buffer.from(out);
}

function stringField(field: number, s: string): Buffer {
  const bytes = Buffer.from(s, "utf8");
  return Buffer.concat([varintBytes((field << 3) | 2), varintBytes(bytes.length), bytes]);
}

/** A protobuf reader over one message: fields in wire order. */
class ProtoReader {
  #pos = 0;
  readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }

  get done(): boolean {
    return this.#pos >= this.buf.length;
  }

  varint(): number {
    let result = 0;
    let scale = 1;
    for (;;) {
      const byte = this.buf[this.#pos++];
      if (byte === undefined) throw new Error("truncated varint");
      result += (byte & 0x7f) * scale;
      if (!(byte & 0x80)) return result;
      scale *= 128;
    }
  }

  /** The next field: its number, and its value (a number for varints, bytes for length-delimited). */
  field(): { field: number; value: number | Buffer } {
    const key = this.varint();
    const wireType = key & 7;
    const field = key >>> 3;
    if (wireType === 0) return { field, value: this.varint() };
    if (wireType === 2) {
      const length = this.varint();
      const value = this.buf.subarray(this.#pos, this.#pos + length);
      this.#pos += length;
      return { field, value };
    }
    if (wireType === 1 || wireType === 5) {
      this.#pos += wireType === 1 ? 8 : 4;
      return { field, value: 0 };
    }
    throw new Error(`unsupported protobuf wire type ${wireType}`);
  }
}

function text(value: number | Buffer): string {
  return Buffer.isBuffer(value) ? value.toString("utf8") : String(value);
}

/** CloudEventAttributeValue: bool 1, int32 2, string 3, bytes 4, uri 5, uri_ref 6, Timestamp 7 (kept as seconds). */
function decodeAttributeValue(buf: Buffer): string | number | boolean {
  const reader = new ProtoReader(buf);
  let result: string | number | boolean = "";
  while (!reader.done) {
    const { field, value } = reader.field();
    if (field === 1) result = value === 1;
    else if (field === 2 && typeof value === "number") result = value > 2 ** 31 ? value - 2 ** 64 : value;
    else if (field === 7 && Buffer.isBuffer(value)) result = new ProtoReader(value).field().value as number;
    else result = text(value);
  }
  return result;
}

/** map<string, CloudEventAttributeValue> entry: key 1, value 2. */
function decodeAttribute(buf: Buffer): [string, string | number | boolean] {
  const reader = new ProtoReader(buf);
  let key = "";
  let attr: string | number | boolean = "";
  while (!reader.done) {
    const { field, value } = reader.field();
    if (field === 1) key = text(value);
    else if (field === 2 && Buffer.isBuffer(value)) attr = decodeAttributeValue(value);
  }
  return [key, attr];
}

/** CloudEvent { id 1; source 2; spec_version 3; type 4; attributes 5; binary_data 6 | text_data 7 | proto_data 8 }. */
export function decodeCloudEvent(buf: Buffer): ReceivedCloudEvent {
  const event: ReceivedCloudEvent = { id: "", source: "", type: "", attributes: new Map(), data: undefined };
  const reader = new ProtoReader(buf);
  while (!reader.done) {
    const { field, value } = reader.field();
    if (field === 1) event.id = text(value);
    else if (field === 2) event.source = text(value);
    else if (field === 4) event.type = text(value);
    else if (field === 5 && Buffer.isBuffer(value)) event.attributes.set(...decodeAttribute(value));
    else if (field === 6 || field === 7) event.data = text(value);
  }
  return event;
}

/** Splits a gRPC response body into its length-prefixed messages, across chunk boundaries. */
class FrameSplitter {
  #pending: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.#pending = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    const messages: Buffer[] = [];
    while (this.#pending.length >= 5) {
      const length = this.#pending.readUInt32BE(1);
      if (this.#pending.length < 5 + length) break;
      messages.push(this.#pending.subarray(5, 5 + length));
      this.#pending = this.#pending.subarray(5 + length);
    }
    return messages;
  }
}

export interface SubscribeRequest {
  /** The source whose resources' statuses are wanted (the one bundles were published as). */
  source: string;
  clusterName?: string;
  dataType?: string;
}

export class MaestroGrpcClient {
  readonly #session: ClientHttp2Session;

  constructor(address: string) {
    this.#session = connect(`http://${address}`);
    this.#session.on("error", () => undefined); // surfaces on the streams in flight
  }

  /** Unary Publish; rejects unless grpc-status is 0. */
  publish(event: GrpcCloudEvent, timeoutMs = 30_000): Promise<void> {
    const encoded = encodeCloudEvent(event);
    // PublishRequest { CloudEvent event = 1; }
    const request = Buffer.concat([varintBytes((1 << 3) | 2), varintBytes(encoded.length), encoded]);
    return new Promise((resolve, reject) => {
      const stream = this.#session.request({
        ":method": "POST",
        ":path": `${SERVICE}/Publish`,
        "content-type": "application/grpc",
        te: "trailers",
      });
      stream.setTimeout(timeoutMs, () => stream.close());
      let status: number | undefined;
      let detail = "";
      const take = (headers: Record<string, unknown>): void => {
        if (headers["grpc-status"] !== undefined) status = Number(headers["grpc-status"]);
        if (typeof headers["grpc-message"] === "string") detail = decodeURIComponent(headers["grpc-message"]);
      };
      stream.on("response", take);
      stream.on("trailers", take);
      stream.on("data", () => undefined);
      stream.once("error", reject);
      stream.once("close", () =>
        status === 0
          ? resolve()
          : reject(new Error(`maestro gRPC Publish ${event.type}: status ${status ?? "none"} ${detail}`)),
      );
      stream.end(grpcFrame(request));
    });
  }

  /**
   * Opens the Subscribe stream; `onEvent` gets every CloudEvent (statuses and heartbeats). Resolves
   * once the server has answered with its response headers, i.e. the subscription is registered.
   */
  subscribe(req: SubscribeRequest, onEvent: (event: ReceivedCloudEvent) => void): Promise<() => void> {
    const body = Buffer.concat([
      stringField(1, req.source),
      ...(req.clusterName ? [stringField(2, req.clusterName)] : []),
      ...(req.dataType ? [stringField(3, req.dataType)] : []),
    ]);
    const stream = this.#session.request({
      ":method": "POST",
      ":path": `${SERVICE}/Subscribe`,
      "content-type": "application/grpc",
      te: "trailers",
    });
    const splitter = new FrameSplitter();
    stream.on("data", (chunk: Buffer) => {
      for (const message of splitter.push(chunk)) onEvent(decodeCloudEvent(message));
    });
    stream.end(grpcFrame(body));
    return new Promise((resolve, reject) => {
      stream.once("response", () => resolve(() => stream.close()));
      stream.once("error", reject);
    });
  }

  close(): void {
    this.#session.close();
  }
}
