/** People on the test region's clusters (hack/harness/people.ts), each with a client of their own. */
import { KubeConfig } from "@kubernetes/client-node";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { personKubeconfig } from "../../hack/harness/people.ts";
import { KubeClient } from "../../operators/runtime/kube.ts";
import { kubeConfigFor, region } from "./region.ts";

export interface Person {
  name: string;
  groups: string[];
  client: KubeClient;
  kubeconfigPath: string;
}

let dir: Promise<string> | undefined;
let serial = 0;

export async function person(cluster: string, name: string, groups: string[]): Promise<Person> {
  const server = kubeConfigFor(cluster).getCurrentCluster()?.server;
  if (!server) throw new Error(`no current cluster for ${cluster}`);
  dir ??= mkdtemp(join(region().workDir, "people-"));
  const kubeconfigPath = await personKubeconfig({
    apiServerDir: join(region().workDir, cluster),
    server,
    outDir: await dir,
    stem: `${cluster}-${name.replace(/[^A-Za-z0-9]/g, "_")}-${serial++}`,
    name,
    groups,
  });
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  return { name, groups, client: new KubeClient(cluster, kc), kubeconfigPath };
}
