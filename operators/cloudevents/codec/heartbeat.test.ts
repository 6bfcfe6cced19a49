import { describe, expect, it } from "vitest";
import { DecodeError, Ext, parseEventType } from "../types.ts";
import {
  HEARTBEAT_DATA_TYPE,
  decodeHeartbeat,
  encodeHeartbeat,
  isHeartbeat,
  silenceBoundMs,
} from "./heartbeat.ts";

describe("heartbeat events", () => {
  it("round-trip the consumer and the interval, in a type a Maestro source parses but does not decode", () => {
    const event = encodeHeartbeat("mgmt-1-work-agent", { consumer: "mgmt-1", intervalMs: 10_000 });
    expect(event).toMatchObject({
      specversion: "1.0",
      source: "mgmt-1-work-agent",
      datacontenttype: "application/json",
      extensions: { [Ext.clusterName]: "mgmt-1" },
      data: { intervalSeconds: 10 },
    });
    // Five parts, subresource status: sdk-go's ParseCloudEventsType accepts it, and the data type
    // differs from manifestbundles, so its source client skips the event.
    expect(parseEventType(event.type)).toEqual({
      dataType: HEARTBEAT_DATA_TYPE,
      subResource: "status",
      action: "update_request",
    });
    expect(isHeartbeat(event)).toBe(true);
    expect(decodeHeartbeat(event)).toEqual({ consumer: "mgmt-1", intervalMs: 10_000 });
  });

  it("carries the broker certificate in use, and refuses one that is malformed, naming the field", () => {
    const brokerCertificate = {
      serialNumber: "7f3a",
      notBefore: "2026-01-01T00:00:00.000Z",
      notAfter: "2026-01-31T00:00:00.000Z",
    };
    const event = encodeHeartbeat("a", { consumer: "mgmt-1", intervalMs: 1000, brokerCertificate });
    expect(decodeHeartbeat(event)).toEqual({ consumer: "mgmt-1", intervalMs: 1000, brokerCertificate });
    const bad = (certificate: unknown) => ({
      ...event,
      data: { intervalSeconds: 1, brokerCertificate: certificate },
    });
    expect(() => decodeHeartbeat(bad({ ...brokerCertificate, serialNumber: "7F;3a" }))).toThrow(
      /^data\.brokerCertificate\.serialNumber:/,
    );
    expect(() => decodeHeartbeat(bad({ ...brokerCertificate, notAfter: "soon" }))).toThrow(
      /^data\.brokerCertificate\.notAfter:/,
    );
    expect(() => decodeHeartbeat(bad("x"))).toThrow(/^data\.brokerCertificate:/);
  });

  it("keeps sub-second intervals, for tests", () => {
    const event = encodeHeartbeat("a", { consumer: "mgmt-1", intervalMs: 250 });
    expect(decodeHeartbeat(event).intervalMs).toBe(250);
  });

  it.each([
    ["no interval", {}, "data.intervalSeconds"],
    ["a string interval", { intervalSeconds: "10" }, "data.intervalSeconds"],
    ["a zero interval", { intervalSeconds: 0 }, "data.intervalSeconds"],
    ["an interval over an hour", { intervalSeconds: 3601 }, "data.intervalSeconds"],
    ["no data", undefined, "data.intervalSeconds"],
  ])("refuses %s, naming the field", (_name, data, field) => {
    const event = { ...encodeHeartbeat("a", { consumer: "mgmt-1", intervalMs: 1000 }), data };
    expect(() => decodeHeartbeat(event)).toThrow(DecodeError);
    expect(() => decodeHeartbeat(event)).toThrow(new RegExp(`^${field.replace(".", "\\.")}:`));
  });

  it("refuses a heartbeat without its consumer", () => {
    const event = encodeHeartbeat("a", { consumer: "mgmt-1", intervalMs: 1000 });
    event.extensions = {};
    expect(() => decodeHeartbeat(event)).toThrow(/^extensions\.clustername:/);
  });
});

describe("silenceBoundMs", () => {
  it("is three intervals, of 10 s for an agent that announced none", () => {
    expect(silenceBoundMs(undefined)).toBe(30_000);
    expect(silenceBoundMs(1_000)).toBe(3_000);
  });
});
