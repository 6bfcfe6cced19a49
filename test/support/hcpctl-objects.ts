/**
 * Fixed service-cluster objects for hcpctl's unit tests: a Ready cluster with two node pools and an
 * external auth (Ready) on mgmt-1 (works applied, HostedCluster feedback carried back), and changes of it (deleting,
 * blocked). Shaped as the controllers write them.
 */
import type {
  ExternalAuth,
  HcpCluster,
  ManagementCluster,
  NodePool,
} from "../../operators/api/v1alpha1/index.ts";
import type { ManifestWork } from "../../operators/api/work/v1.ts";
import type { ClusterSnapshot } from "../../operators/hcpctl/model.ts";

export const NOW = Date.parse("2026-09-01T12:00:00Z");
const T = (secondsAgo: number): string =>
  new Date(NOW - secondsAgo * 1000).toISOString().replace(/\.\d+Z$/, "Z");
const UID = "0b8e1c2a-1111-4aaa-8bbb-000000000001";
const POOL_UID = "0b8e1c2a-2222-4aaa-8bbb-000000000002";
const BATCH_UID = "0b8e1c2a-3333-4aaa-8bbb-000000000003";

const ok = (type: string, message: string, ago = 300, reason = "AsExpected") => ({
  type,
  status: "True" as const,
  reason,
  message,
  lastTransitionTime: T(ago),
  observedGeneration: 1,
});
const no = (type: string, reason: string, message: string, ago = 300) => ({
  type,
  status: "False" as const,
  reason,
  message,
  lastTransitionTime: T(ago),
  observedGeneration: 1,
});

export function readyCluster(): HcpCluster {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "HcpCluster",
    metadata: {
      name: "demo",
      namespace: "customer",
      uid: UID,
      generation: 1,
      creationTimestamp: T(600),
      finalizers: ["hcp.aro.dev/cluster"],
    },
    spec: {
      version: { id: "4.19" },
      dns: { baseDomainPrefix: "demo" },
      platform: {
        azure: {
          subscriptionId: "6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10",
          location: "eastus",
          managedResourceGroup: "arohcp-demo-managed",
          subnetId:
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/n",
          networkSecurityGroupId:
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkSecurityGroups/g",
          identities: { controlPlaneOperators: { a: "/x" }, serviceManagedIdentity: "/y" },
        },
      },
    },
    status: {
      phase: "Ready",
      version: "4.19.7",
      observedGeneration: 1,
      managementCluster: "mgmt-1",
      clusterID: UID,
      hostedClusterNamespace: `ocm-local-${UID}`,
      apiURL: "https://api.demo.hcp.example.com:443",
      consoleURL: "https://console-openshift-console.apps.demo.hcp.example.com",
      conditions: [
        ok("Ready", "The cluster is ready on mgmt-1", 120),
        ok("DnsDelegated", "NS delegation of demo.hcp.example.com in hcp.example.com as expected"),
        ok("DnsRecordsReady", "A records as expected", 130),
        ok("DnsZoneReady", "DNS zone demo.hcp.example.com as expected"),
        ok("HostedClusterApplied", "Applied on mgmt-1", 200, "Applied"),
        ok("HostedClusterAvailable", "The hosted control plane is available", 130),
        ok("IngressReady", "Load balancer demo-ingress-lb as expected"),
        ok("Placed", "Placed on mgmt-1", 500),
        ok("ResourceGroupReady", "Resource group arohcp-demo-managed as expected"),
        ok("ValidVersion", "4.19 resolves to 4.19.7", 500),
        no("Degraded", "AsExpected", "No problem found", 500),
        no("Progressing", "AsExpected", "Nothing to roll out", 120),
        no("Paused", "NotPaused", "Changes roll out", 500),
      ],
    },
  };
}

export function pool(name: string, uid: string): NodePool {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "NodePool",
    metadata: {
      name,
      namespace: "customer",
      uid,
      generation: 1,
      creationTimestamp: T(600),
      finalizers: ["hcp.aro.dev/nodepool"],
    },
    spec: { clusterRef: { name: "demo" }, platform: { azure: { vmSize: "Standard_D8s_v3" } }, replicas: 2 },
    status: {
      phase: "Ready",
      replicas: 2,
      readyReplicas: 2,
      version: "4.19.7",
      observedGeneration: 1,
      conditions: [
        ok("Ready", "The nodes are ready", 100),
        ok("ClusterReady", "The cluster is ready"),
        ok("NodePoolApplied", "Applied on mgmt-1", 200, "Applied"),
        ok("NodesReady", "2 of 2 nodes ready", 100),
        no("Degraded", "AsExpected", "No problem found"),
        no("Progressing", "AsExpected", "Nothing to roll out", 100),
      ],
    },
  };
}

/** An Entra ID provider of the cluster, Ready: HyperShift accepted it at generation 1. */
export function externalAuth(name = "entra"): ExternalAuth {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "ExternalAuth",
    metadata: {
      name,
      namespace: "customer",
      uid: `0b8e1c2a-4444-4aaa-8bbb-${name.padStart(12, "0").slice(-12)}`,
      generation: 1,
      creationTimestamp: T(500),
      finalizers: ["hcp.aro.dev/externalauth"],
    },
    spec: {
      clusterRef: { name: "demo" },
      issuer: { url: "https://login.microsoftonline.com/tenant/v2.0", audiences: ["console-app"] },
      clients: [
        {
          componentName: "console",
          componentNamespace: "openshift-console",
          clientId: "console-app",
          type: "Confidential",
        },
      ],
      claim: { mappings: { username: { claim: "email" } } },
    },
    status: {
      phase: "Ready",
      observedGeneration: 1,
      conditions: [
        ok("Ready", "HyperShift accepted the provider", 90),
        ok("ClusterReady", "The cluster is ready"),
        ok("ProviderApplied", "The HostedCluster carries the provider", 150),
        ok("ProviderAccepted", "HyperShift accepted the provider", 90),
        no("Degraded", "AsExpected", "No problem found"),
        no("Progressing", "AsExpected", "Nothing to roll out", 90),
      ],
    },
  };
}

export function managementCluster(): ManagementCluster {
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "ManagementCluster",
    metadata: { name: "mgmt-1", uid: "mc-1", generation: 1, creationTimestamp: T(3600) },
    spec: { consumerName: "mgmt-1", capacity: { maxHostedClusters: 50 }, region: "eastus" },
    status: {
      phase: "Ready",
      hostedClusters: 1,
      observedGeneration: 1,
      conditions: [ok("Schedulable", "1 of 50 hosted clusters placed", 500, "HasCapacity")],
    },
  };
}

function applied(kind: string, name: string, ordinal: number, namespace?: string) {
  return {
    resourceMeta: {
      ordinal,
      group: kind === "HostedCluster" ? "hypershift.openshift.io" : "",
      version: "v1",
      kind,
      name,
      namespace,
    },
    conditions: [
      ok("Applied", "Apply manifest complete", 200, "AppliedManifestComplete"),
      ok("Available", "Resource is available", 200, "ResourceAvailable"),
    ],
  };
}

const workStatusTime = (ago: number) => [
  { manager: "cluster-controller", operation: "Apply" as const, time: T(500), fieldsV1: { "f:spec": {} } },
  { manager: "maestro-server", operation: "Apply" as const, subresource: "status", time: T(ago) },
];

export function clusterWork(): ManifestWork {
  const ns = `ocm-local-${UID}`;
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: {
      name: UID,
      namespace: "mgmt-1",
      uid: "w-1",
      generation: 1,
      creationTimestamp: T(500),
      finalizers: ["cluster.open-cluster-management.io/manifest-work-cleanup"],
      labels: {
        "hcp.aro.dev/cluster-uid": UID,
        "hcp.aro.dev/cluster-name": "demo",
        "hcp.aro.dev/cluster-namespace": "customer",
      },
      managedFields: workStatusTime(130),
    },
    spec: {
      workload: {
        manifests: [
          { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } },
          { apiVersion: "v1", kind: "Secret", metadata: { name: "pull-secret", namespace: ns } },
          {
            apiVersion: "hypershift.openshift.io/v1beta1",
            kind: "HostedCluster",
            metadata: { name: "demo", namespace: ns },
            spec: { dns: { baseDomain: "hcp.example.com", baseDomainPrefix: "demo" } },
          },
        ],
      },
    },
    status: {
      conditions: [
        ok("Applied", "Apply manifest work complete", 200, "AppliedManifestWorkComplete"),
        ok("Available", "All resources are available", 200, "ResourcesAvailable"),
        ok("Published", "Generation 1 was published to consumer mgmt-1", 500, "Published"),
      ],
      resourceStatus: {
        manifests: [
          applied("Namespace", ns, 0),
          applied("Secret", "pull-secret", 1, ns),
          {
            ...applied("HostedCluster", "demo", 2, ns),
            statusFeedback: {
              values: [
                {
                  name: "available",
                  fieldValue: {
                    type: "JsonRaw",
                    jsonRaw: JSON.stringify(ok("Available", "The hosted control plane is available", 130)),
                  },
                },
                {
                  name: "progressing",
                  fieldValue: {
                    type: "JsonRaw",
                    jsonRaw: JSON.stringify(
                      no("Progressing", "AsExpected", "HostedCluster is at expected version", 130),
                    ),
                  },
                },
                {
                  name: "degraded",
                  fieldValue: {
                    type: "JsonRaw",
                    jsonRaw: JSON.stringify(no("Degraded", "AsExpected", "", 300)),
                  },
                },
                { name: "completedVersion", fieldValue: { type: "String", string: "4.19.7" } },
                { name: "endpointHost", fieldValue: { type: "String", string: "api.demo.hcp.example.com" } },
                { name: "endpointPort", fieldValue: { type: "Integer", integer: 443 } },
              ],
            },
          },
        ],
      },
    },
  };
}

export function poolWork(name: string, poolUid: string): ManifestWork {
  const ns = `ocm-local-${UID}`;
  return {
    apiVersion: "work.open-cluster-management.io/v1",
    kind: "ManifestWork",
    metadata: {
      name: `${UID}-${name}`,
      namespace: "mgmt-1",
      uid: `w-${name}`,
      generation: 1,
      creationTimestamp: T(400),
      finalizers: ["cluster.open-cluster-management.io/manifest-work-cleanup"],
      labels: {
        "hcp.aro.dev/cluster-uid": UID,
        "hcp.aro.dev/cluster-name": "demo",
        "hcp.aro.dev/cluster-namespace": "customer",
        "hcp.aro.dev/nodepool": poolUid,
      },
      managedFields: workStatusTime(100),
    },
    spec: {
      workload: {
        manifests: [
          {
            apiVersion: "hypershift.openshift.io/v1beta1",
            kind: "NodePool",
            metadata: { name: `demo-${name}`, namespace: ns },
          },
        ],
      },
    },
    status: {
      conditions: [
        ok("Applied", "Apply manifest work complete", 200, "AppliedManifestWorkComplete"),
        ok("Published", "Generation 1 was published to consumer mgmt-1", 400, "Published"),
      ],
      resourceStatus: {
        manifests: [
          {
            ...applied("NodePool", `demo-${name}`, 0, ns),
            statusFeedback: {
              values: [
                { name: "replicas", fieldValue: { type: "Integer", integer: 2 } },
                { name: "version", fieldValue: { type: "String", string: "4.19.7" } },
                {
                  name: "ready",
                  fieldValue: { type: "JsonRaw", jsonRaw: JSON.stringify(ok("Ready", "", 100)) },
                },
              ],
            },
          },
        ],
      },
    },
  };
}

export function readySnapshot(): ClusterSnapshot {
  return {
    cluster: readyCluster(),
    nodePools: [pool("workers", POOL_UID), pool("batch", BATCH_UID)],
    externalAuths: [externalAuth()],
    managementCluster: managementCluster(),
    works: [clusterWork(), poolWork("workers", POOL_UID), poolWork("batch", BATCH_UID)],
  };
}

/**
 * The cluster deleted while its node pool "workers" carries a finalizer no controller here owns:
 * the pool's work is gone, the pool stays, and the cluster waits for it.
 */
export function blockedSnapshot(): ClusterSnapshot {
  const s = readySnapshot();
  s.cluster.metadata.deletionTimestamp = T(40);
  s.cluster.metadata.generation = 2;
  const conditions = (s.cluster.status?.conditions ?? []).filter(
    (c) => !["Ready", "Progressing"].includes(c.type),
  );
  s.cluster.status = {
    ...s.cluster.status,
    phase: "Deleting",
    conditions: [
      {
        ...no("Ready", "Deleting", "Waiting for 1 node pool(s) to be deleted: workers", 40),
        observedGeneration: 2,
      },
      {
        ...ok("Progressing", "Waiting for 1 node pool(s) to be deleted: workers", 40, "DeletingNodePools"),
        observedGeneration: 2,
      },
      {
        ...ok("Deleting", "Waiting for 1 node pool(s) to be deleted: workers", 40, "DeletingNodePools"),
        observedGeneration: 2,
      },
      ...conditions,
    ],
  };
  const workers = s.nodePools[0]!;
  workers.metadata.deletionTimestamp = T(39);
  workers.metadata.finalizers = ["example.com/hold"];
  s.nodePools = [workers];
  s.works = [clusterWork()];
  return s;
}

/** The IDs of the ARM request that created `armCluster()`. */
export const ARM_REQUEST = {
  operationId: "7d3e91a0-5c1b-4e2f-9a8d-3b6c0e4f2a11",
  correlationRequestId: "corr-0001",
  clientRequestId: "client-0001",
  resourceId:
    "/subscriptions/6b0f3a4e-8d1c-4c2a-9e57-0c3d2b1a9f10/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/demo",
  startTime: new Date(NOW - 600_000 + 123).toISOString(),
};

/** The frontend's operation document of a request on the cluster (operators/frontend/operations.ts). */
export function operationDoc(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: ARM_REQUEST.operationId,
    request: "Create",
    resourceId: ARM_REQUEST.resourceId,
    kind: "cluster",
    target: "demo",
    location: "eastus",
    apiVersion: "2024-06-10-preview",
    correlationRequestId: ARM_REQUEST.correlationRequestId,
    clientRequestId: ARM_REQUEST.clientRequestId,
    startTime: ARM_REQUEST.startTime,
    lastTransitionTime: ARM_REQUEST.startTime,
    status: "Accepted",
    ...over,
  };
}

/** The annotations the frontend writes with a request's document. */
export function operationAnnotations(doc: Record<string, unknown>): Record<string, string> {
  return {
    "hcp.aro.dev/arm-resource-id": String(doc["resourceId"]),
    "hcp.aro.dev/arm-operation-id": String(doc["id"]),
    "hcp.aro.dev/arm-operation-request": String(doc["request"]),
    "hcp.aro.dev/arm-operation": JSON.stringify(doc),
    "hcp.aro.dev/correlation-request-id": String(doc["correlationRequestId"]),
    "hcp.aro.dev/client-request-id": String(doc["clientRequestId"]),
  };
}

/**
 * The Ready snapshot as an ARM PUT left it: the cluster created by the request ARM_REQUEST names
 * (its document on the cluster), and the cluster's work written with the request's IDs.
 */
export function armSnapshot(): ClusterSnapshot {
  const s = readySnapshot();
  s.cluster.metadata.annotations = operationAnnotations(operationDoc());
  s.cluster.metadata.labels = { "hcp.aro.dev/arm-operation-key": ARM_REQUEST.operationId.slice(0, 8) };
  for (const w of s.works)
    w.metadata.annotations = {
      "hcp.aro.dev/correlation-request-id": ARM_REQUEST.correlationRequestId,
      "hcp.aro.dev/client-request-id": ARM_REQUEST.clientRequestId,
    };
  return s;
}

/** A frontend operation ConfigMap (a Delete's, or one a poll froze). */
export function operationConfigMap(namespace: string, doc: Record<string, unknown>) {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `op-${String(doc["id"])}`,
      namespace,
      labels: {
        "hcp.aro.dev/arm-operation": "true",
        "hcp.aro.dev/arm-operation-target": String(doc["target"]),
      },
    },
    data: { "operation.json": JSON.stringify(doc) },
  };
}

export const at = T;
