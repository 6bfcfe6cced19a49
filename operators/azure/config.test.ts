import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { resolveAzureConfig } from "./config.ts";

describe("resolveAzureConfig TLS trust", () => {
  let dir: string;
  let caFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "azure-config-"));
    caFile = join(dir, "ca.pem");
    await writeFile(caFile, rootCertificates[0] as string);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("keeps Node's defaults untouched without a caFile", async () => {
    expect((await resolveAzureConfig({ registry: new Registry() })).tls).toBeUndefined();
  });

  it("turns a caFile into one secure context, so the SDK's agent names its pool without the CA list", async () => {
    const { tls } = await resolveAzureConfig({ caFile, registry: new Registry() });
    expect(tls?.secureContext).toBeDefined();
    expect(tls?.ca).toBeUndefined();
    // What the SDK does with tlsOptions: spread them into an https.Agent, which names each
    // request's connection pool from its options. A CA list there was joined on every request.
    const agent = new Agent({ keepAlive: true, ...tls });
    const name = agent.getName({ host: "arm.example", port: 443 });
    expect(name.length).toBeLessThan(100);
    agent.destroy();
  });
});
