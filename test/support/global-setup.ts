/**
 * Starts the local region once for the integration project and tears it down afterwards (also
 * when tests fail: vitest always runs the returned teardown).
 */
import type { TestProject } from "vitest/node";
import { startRegion } from "../../hack/harness/region.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const region = await startRegion({ managementClusters: 2, postgres: true });
  process.stderr.write(`[global-setup] local region ready in ${region.startupMs} ms\n`);
  const { broker, postgres } = region;
  if (!broker) throw new Error("the test region started no broker");
  if (!postgres) throw new Error("the test region started no PostgreSQL");
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
  // Test files make their own databases on it (test/support/postgres.ts).
  project.provide("postgres", {
    url: postgres.url,
    host: postgres.host,
    port: postgres.port,
    user: postgres.user,
    database: postgres.database,
    socketDir: postgres.socketDir,
  });
  return () => region.stop();
}
