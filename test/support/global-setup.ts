/**
 * Starts the local region once for the integration project and tears it down afterwards (also
 * when tests fail: vitest always runs the returned teardown).
 */
import type { TestProject } from "vitest/node";
import { startRegion } from "../../hack/harness/region.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const region = await startRegion({ managementClusters: 2 });
  process.stderr.write(`[global-setup] local region ready in ${region.startupMs} ms\n`);
  project.provide("region", {
    clusters: region.clusters.map((c) => ({ name: c.name, kubeconfigPath: c.kubeconfigPath, url: c.url })),
    assetsDir: region.assetsDir,
    etcdUrl: region.etcdUrl,
    workDir: region.workDir,
  });
  return () => region.stop();
}
