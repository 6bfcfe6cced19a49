/**
 * The simulator's one Secret watch, cluster-wide as HyperShift's operator and Velero read Secrets
 * from their managers' caches. Most reads need a Secret's metadata only (does the admin kubeconfig
 * exist, which key is etcd data under), so the cache drops `data` and `stringData` except where a
 * reader uses them: Velero's namespace (the BackupStorageLocation's credentials) and the break-glass
 * signers' Secrets (signer.ts). The root CA's Secret is read only when a create finds it made
 * already, from the apiserver, so its key is not held for every control plane.
 */
import { SecretResource } from "../../operators/api/core.ts";
import { VELERO_NAMESPACE } from "../../operators/api/velero/v1/index.ts";
import type { Cluster } from "../../operators/runtime/clusters.ts";
import type { Informer } from "../../operators/runtime/informer.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { SIGNER_SECRETS } from "./signer.ts";

export type CachedSecret = KubeObject & { type?: string; data?: Record<string, string> };

const SIGNER_SECRET_NAMES: ReadonlySet<string> = new Set(Object.values(SIGNER_SECRETS));

function keepsData(secret: CachedSecret): boolean {
  return (
    secret.metadata.namespace === VELERO_NAMESPACE || SIGNER_SECRET_NAMES.has(secret.metadata.name ?? "")
  );
}

/** The Secret as cached: whole where data is read, its metadata and type elsewhere. */
export function cachedSecret(secret: CachedSecret): CachedSecret {
  if (keepsData(secret)) return secret;
  const { apiVersion, kind, metadata, type } = secret;
  return { apiVersion, kind, metadata, ...(type === undefined ? {} : { type }) };
}

/** The cluster's shared Secret informer with the simulator's trim (one transform per shared informer). */
export function secretInformer(cluster: Cluster): Informer<CachedSecret> {
  return cluster.informer<CachedSecret>(SecretResource, { transform: cachedSecret });
}
