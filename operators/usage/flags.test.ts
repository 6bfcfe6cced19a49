/**
 * The --metering-* flags: metering is off without a database URL, and a bad or missing companion
 * flag is refused naming it before anything is opened (so no service cluster is touched).
 */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../runtime/clusters.ts";
import { silentLogger } from "../runtime/logger.ts";
import { meteringFromFlags, type MeteringFlags } from "./flags.ts";

const untouched = new Proxy({} as Cluster, {
  get: (_t, key) => {
    throw new Error(`the service cluster was used (${String(key)})`);
  },
});
const flags = (more: Partial<MeteringFlags>): MeteringFlags => ({
  "metering-interval-seconds": "60",
  ...more,
});
const DB = "postgresql://hcp@127.0.0.1:1/hcp";

describe("meteringFromFlags", () => {
  it("runs nothing without --metering-database-url", async () => {
    expect(await meteringFromFlags(flags({}), untouched, silentLogger)).toEqual([]);
  });

  it.each([
    [{ "metering-database-url": "mysql://x/y" }, /--metering-database-url must be a postgresql:\/\//],
    [{ "metering-database-url": DB }, /needs --metering-plan-id/],
    [
      { "metering-database-url": DB, "metering-plan-id": "p", "metering-endpoint": "http://127.0.0.1" },
      /--metering-endpoint must be https:\/\/…; got "http:\/\/127.0.0.1"/,
    ],
    [
      { "metering-database-url": DB, "metering-plan-id": "p", "metering-interval-seconds": "0" },
      /--metering-interval-seconds must be a number of seconds, 1 or more; got "0"/,
    ],
    [
      { "metering-database-url": DB, "metering-plan-id": "p", "metering-interval-seconds": "soon" },
      /got "soon"/,
    ],
  ])("refuses %j naming the flag", async (more, message) => {
    await expect(meteringFromFlags(flags(more), untouched, silentLogger)).rejects.toThrow(message);
  });
});
