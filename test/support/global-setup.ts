/**
 * Starts the local region once for the integration project and tears it down afterwards (also
 * when tests fail: vitest always runs the returned teardown).
 */
import type { TestProject } from "vitest/node";
import { startRegion } from "../../hack/harness/region.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const region = await startRegion({ managementClusters: 2 });
  process.stderr.write(`[global-setup] local region ready in ${region.startupMs} ms\n`);
  const { broker } = region;
  if (!broker) throw new Error("the test region started no broker");
  project.provide("region", {
    clusters: region.clusters.map((c) => ({ name: c.name, kubeconfigPath: c.kubeconfigPath, url: c.url })),
    assetsDir: region.assetsDir,
    etcdUrl: region.etcdUrl,
    workDir: region.workDir,
    // Only the plain fields: provided values are serialized to the test workers.
    broker: {
      url: broker.url,
      host: broker.host,
      port: broker.port,
      caPath: broker.caPath,
      caKeyPath: broker.caKeyPath,
      dir: broker.dir,
    },
  });
  return () => region.stop();
}
