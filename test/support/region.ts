/**
 * What integration tests see of the local region started by global-setup.ts: one kube-apiserver per
 * cluster on a shared etcd, and one MQTT broker. Tests create their own namespaces and clean up
 * after themselves.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { inject } from "vitest";
import {
  issueBrokerCredentials,
  type BrokerCredentials,
  type BrokerInfo,
} from "../../hack/harness/broker.ts";

export interface RegionClusterInfo {
  /** "service", "mgmt-1", "mgmt-2" */
  name: string;
  kubeconfigPath: string;
  url: string;
}

export interface RegionInfo {
  clusters: RegionClusterInfo[];
  /** Directory with kube-apiserver, etcd and kubectl (KUBEBUILDER_ASSETS convention). */
  assetsDir: string;
  /** Client URL of the shared etcd, for tests that start an extra apiserver. */
  etcdUrl: string;
  /** Scratch directory of this run; removed at teardown. */
  workDir: string;
  /** The region's mosquitto (mqtts://, client certificates signed by its CA, per-consumer ACL). */
  broker: BrokerInfo;
}

declare module "vitest" {
  export interface ProvidedContext {
    region: RegionInfo;
  }
}

export function region(): RegionInfo {
  return inject("region");
}

export function clusterInfo(name: string): RegionClusterInfo {
  const found = region().clusters.find((c) => c.name === name);
  if (!found) throw new Error(`no cluster ${name} in the test region`);
  return found;
}

/** A KubeConfig loaded from a kubeconfig file, e.g. one an extra test apiserver wrote. */
export function kubeConfigAt(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export function kubeConfigFor(name: string): KubeConfig {
  return kubeConfigAt(clusterInfo(name).kubeconfigPath);
}

export function kubectlPath(): string {
  return `${region().assetsDir}/kubectl`;
}

let clientCertDir: Promise<string> | undefined;
const issuedCredentials = new Map<string, Promise<BrokerCredentials>>();

/** A client certificate for the region's broker with CN = identity, issued once per test worker. */
export function brokerCredentials(identity: string): Promise<BrokerCredentials> {
  let creds = issuedCredentials.get(identity);
  if (!creds) {
    // One directory per worker: workers run in parallel and would overwrite each other's files.
    clientCertDir ??= mkdtemp(join(region().workDir, "broker-clients-"));
    creds = clientCertDir.then((dir) => issueBrokerCredentials(region().broker, dir, identity));
    issuedCredentials.set(identity, creds);
  }
  return creds;
}
