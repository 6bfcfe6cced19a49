import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { aclFile, DEFAULT_MAX_PACKET_SIZE, mosquittoConf } from "./broker.ts";

const SECURITY_SETTINGS = [
  "per_listener_settings",
  "allow_anonymous",
  "max_packet_size",
  "retain_available",
  "require_certificate",
  "use_identity_as_username",
  "use_username_as_clientid",
];

/** Each directive's value, by name (the last one wins, as in mosquitto). */
function settings(conf: string): Map<string, string> {
  const lines = conf.split("\n").map((l) => l.trim());
  return new Map(
    lines
      .filter((l) => l !== "" && !l.startsWith("#"))
      .map((l) => [l.split(/\s+/)[0]!, l.split(/\s+/).slice(1).join(" ")] as const),
  );
}

const configFile = (name: string) =>
  readFile(new URL(`../../config/broker/${name}`, import.meta.url), "utf8");

describe("the local region's broker configuration", () => {
  const harness = settings(
    mosquittoConf(
      { dir: "/d", ca: { name: "broker", certPath: "/d/ca.crt", keyPath: "/d/ca.key" }, logPath: "/d/log" },
      { certPath: "/d/server.crt", keyPath: "/d/server.key" },
      8883,
      { maxPacketSize: DEFAULT_MAX_PACKET_SIZE, retainAvailable: false },
    ),
  );

  it("has the documented production broker's security settings", async () => {
    const production = settings(await configFile("mosquitto.conf"));
    for (const name of SECURITY_SETTINGS)
      expect([name, harness.get(name)]).toEqual([name, production.get(name)]);
    expect(harness.get("use_username_as_clientid")).toBe("true");
    expect(harness.get("retain_available")).toBe("false");
  });

  it("writes the documented production ACL", async () => {
    expect(await configFile("acl")).toContain(aclFile());
  });
});
