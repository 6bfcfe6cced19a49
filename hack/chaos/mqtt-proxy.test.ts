import { describe, expect, it } from "vitest";
import { asQos0, PacketReader, packetType } from "./mqtt-proxy.ts";

/** PUBLISH "a/b", QoS 1, packet id 0x1234, no properties, payload "hi". */
const qos1 = Buffer.from([0x32, 0x0a, 0x00, 0x03, 0x61, 0x2f, 0x62, 0x12, 0x34, 0x00, 0x68, 0x69]);

describe("PacketReader", () => {
  it("cuts a stream into whole packets, whatever the chunks", () => {
    const big = Buffer.concat([Buffer.from([0x30, 0xc8, 0x01]), Buffer.alloc(200, 7)]); // remaining length 200
    const stream = Buffer.concat([qos1, big, Buffer.from([0xc0, 0x00])]);
    const reader = new PacketReader();
    const packets = [
      stream.subarray(0, 5),
      stream.subarray(5, 13),
      stream.subarray(13, 150),
      stream.subarray(150),
    ].flatMap((chunk) => reader.push(chunk));
    expect(packets.map((p) => p.length)).toEqual([12, 203, 2]);
    expect(packets.map(packetType)).toEqual([3, 3, 12]);
    expect(Buffer.compare(packets[0]!, qos1)).toBe(0);
  });
});

describe("asQos0", () => {
  it("drops the packet id and the QoS bits, keeping topic, properties and payload", () => {
    expect([...asQos0(qos1)]).toEqual([0x30, 0x08, 0x00, 0x03, 0x61, 0x2f, 0x62, 0x00, 0x68, 0x69]);
  });

  it("leaves a QoS 0 PUBLISH as it is", () => {
    const qos0 = asQos0(qos1);
    expect(asQos0(qos0)).toBe(qos0);
  });
});
