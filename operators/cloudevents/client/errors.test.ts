import { expect, test } from "vitest";
import { NotConnectedError, PacketTooLargeError } from "../transport/transport.ts";
import { PublishRefusedError, isPublishRefused, notConnected, translateTransportError } from "./errors.ts";

test.each([
  {
    name: "a packet over the broker's limit",
    err: new PacketTooLargeError(600_000, 524_288),
    reason: "too-large",
  },
  {
    name: "a transport without a connection",
    err: new NotConnectedError("MQTT client c"),
    reason: "not-connected",
  },
])("translates $name into PublishRefusedError($reason), message and cause kept", ({ err, reason }) => {
  const translated = translateTransportError(err);
  expect(translated).toBeInstanceOf(PublishRefusedError);
  expect(translated).toMatchObject({ reason, message: err.message, cause: err });
  expect(isPublishRefused(translated, reason as "too-large" | "not-connected")).toBe(true);
});

test("passes any other error through", () => {
  const err = new Error("boom");
  expect(translateTransportError(err)).toBe(err);
  expect(isPublishRefused(err)).toBe(false);
});

test("notConnected names the connection", () => {
  expect(notConnected("maestro-server")).toMatchObject({
    reason: "not-connected",
    message: "maestro-server is not connected to the broker",
  });
});
