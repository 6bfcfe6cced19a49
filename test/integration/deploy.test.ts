/**
 * config/ as a region is deployed: every kustomization renders with kubectl's kustomize and is
 * accepted by a server-side dry run on the cluster it is for (the local region's service cluster,
 * or mgmt-1 for an agent), with the service's CRDs and the real Prometheus operator and Argo CD
 * CRDs (from their Go modules) installed. The layers override what they say: the rendered
 * cluster overlays hold the value of the lowest layer that sets it. The production shape
 * (probes, resources, read-only root, PodDisruptionBudgets, NetworkPolicies, no wildcard verbs)
 * holds for every rendered Deployment.
 */
import { execFile } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installCrds, readCrds } from "../../hack/harness/crds.ts";
import { deploymentCrds } from "../../hack/harness/upstream.ts";
import { scratchDir } from "../support/fixtures.ts";
import { clusterInfo, kubeConfigFor, kubectlPath } from "../support/region.ts";

const exec = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));
const MANAGEMENT = "mgmt-1";
const NAMESPACES = ["hcp-system", "maestro-agent", "argocd"];

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  rules?: Array<{ verbs: string[] }>;
}

function kubectl(cluster: string, ...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return exec(kubectlPath(), ["--kubeconfig", clusterInfo(cluster).kubeconfigPath, ...args], {
    cwd: repo,
    maxBuffer: 64 << 20,
  });
}

/** Every folder under config/ with a kustomization.yaml, relative to the repository. */
function kustomizations(dir = join(repo, "config")): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const here = entries.some((e) => e.name === "kustomization.yaml") ? [relative(repo, dir)] : [];
  return [
    ...here,
    ...entries.filter((e) => e.isDirectory()).flatMap((e) => kustomizations(join(dir, e.name))),
  ];
}

const rendered = new Map<string, { yaml: string; objects: Obj[] }>();
async function render(path: string): Promise<{ yaml: string; objects: Obj[] }> {
  let out = rendered.get(path);
  if (!out) {
    const { stdout } = await exec(kubectlPath(), ["kustomize", path], { cwd: repo, maxBuffer: 64 << 20 });
    out = { yaml: stdout, objects: (loadAll(stdout) as Array<Obj | null>).filter((o): o is Obj => !!o) };
    rendered.set(path, out);
  }
  return out;
}

const find = (objects: Obj[], kind: string, name: string): Obj => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in the rendered output`);
  return found;
};

/** The agent's overlays go to a management cluster; the rest to the service cluster. */
const clusterFor = (objects: Obj[]): string =>
  objects.some((o) => o.kind === "Deployment" && o.metadata.name === "maestro-agent")
    ? MANAGEMENT
    : "service";

interface Container {
  name: string;
  image: string;
  args?: string[];
  livenessProbe?: unknown;
  readinessProbe?: unknown;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
}
interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: { containers: Container[]; securityContext?: { runAsNonRoot?: boolean } };
}
const template = (d: Obj) => (d.spec as { template: PodTemplate }).template;
const container = (objects: Obj[], deployment: string): Container =>
  template(find(objects, "Deployment", deployment)).spec.containers[0] as Container;
const hcpRegion = (objects: Obj[]): Record<string, string> =>
  objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("hcp-region-"))?.data ?? {};

const selects = (
  selector: { matchLabels?: Record<string, string> } | undefined,
  labels: Record<string, string>,
) => Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);

/** Probes, resources, a read-only root, non-root, a pinned image, a NetworkPolicy, a budget if replicated. */
function expectProductionShape(d: Obj, objects: Obj[]): void {
  const name = d.metadata.name;
  const pod = template(d);
  expect(pod.spec.securityContext?.runAsNonRoot, name).toBe(true);
  for (const c of pod.spec.containers) expectContainerShape(c, name);
  const labels = pod.metadata.labels;
  const selecting = (kind: string, field: string) =>
    objects.filter((o) => o.kind === kind && selects(o.spec?.[field] as never, labels));
  expect(selecting("NetworkPolicy", "podSelector"), `${name} has a NetworkPolicy`).toHaveLength(1);
  if ((d.spec as { replicas: number }).replicas > 1)
    expect(selecting("PodDisruptionBudget", "selector"), `${name} has a PodDisruptionBudget`).toHaveLength(1);
  // Scraped: a ServiceMonitor selects a Service that selects these pods.
  const services = objects.filter(
    (o) => o.kind === "Service" && selects({ matchLabels: o.spec?.["selector"] as never }, labels),
  );
  const scraped = objects.some(
    (o) =>
      o.kind === "ServiceMonitor" &&
      services.some((svc) => selects(o.spec?.["selector"] as never, svc.metadata.labels ?? {})),
  );
  expect(scraped, `${name} is scraped by a ServiceMonitor`).toBe(true);
}

function expectContainerShape(c: Container, name: string): void {
  expect(c.image, name).toMatch(/@sha256:[0-9a-f]{64}$/);
  expect(c.livenessProbe && c.readinessProbe, name).toBeTruthy();
  expect(c.resources?.requests?.["cpu"] && c.resources.requests["memory"], name).toBeTruthy();
  expect(c.resources?.limits?.["memory"], name).toBeTruthy();
  expect(c.securityContext, name).toMatchObject({
    readOnlyRootFilesystem: true,
    allowPrivilegeEscalation: false,
  });
  expect(["operators", "frontend", "maestro-agent"], name).toContain(c.args?.[0]);
}

const created: Array<[cluster: string, namespace: string]> = [];
let installedCrds: string[] = [];
let scratch: { path: string; remove(): Promise<void> };

beforeAll(async () => {
  scratch = await scratchDir("deploy");
  const crds = await deploymentCrds();
  // Other test files share these apiservers: the CRDs go again when this file is done.
  installedCrds = (await readCrds(crds)).map((crd) => crd.metadata.name ?? "");
  await Promise.all(["service", MANAGEMENT].map((c) => installCrds(kubeConfigFor(c), crds)));
  // A dry run creates no namespace, so the objects in one need it to exist.
  for (const cluster of ["service", MANAGEMENT]) {
    for (const ns of NAMESPACES) {
      const { stdout } = await kubectl(cluster, "get", "namespace", ns, "--ignore-not-found", "-o", "name");
      if (stdout.trim()) continue;
      await kubectl(cluster, "create", "namespace", ns);
      created.push([cluster, ns]);
    }
  }
}, 180_000);

afterAll(async () => {
  for (const cluster of ["service", MANAGEMENT])
    await kubectl(cluster, "delete", "crd", "--ignore-not-found", "--wait=false", ...installedCrds);
  for (const [cluster, ns] of created) await kubectl(cluster, "delete", "namespace", ns, "--wait=false");
  await scratch?.remove();
});

const ALL = kustomizations();

describe("config/ renders and dry-runs", () => {
  it("has the layers: bases, global, a sector, two regions, their clusters, GitOps", () => {
    for (const path of [
      "config/bases/operators",
      "config/bases/frontend",
      "config/bases/agent",
      "config/global/service",
      "config/global/management",
      "config/sectors/americas/service",
      "config/regions/eastus/service",
      "config/regions/westus3/management",
      "config/clusters/svc-eastus",
      "config/clusters/westus3-mgmt-2",
      "config/gitops/regions/eastus",
    ])
      expect(ALL).toContain(path);
  });

  it.each(ALL)("%s is accepted by a server-side dry run", async (path) => {
    const { yaml, objects } = await render(path);
    expect(objects.length, path).toBeGreaterThan(0);
    const file = join(scratch.path, `${path.replaceAll("/", "_")}.yaml`);
    writeFileSync(file, yaml);
    const namespaced = path.startsWith("config/samples") ? ["-n", "default"] : [];
    const { stdout } = await kubectl(
      clusterFor(objects),
      ...["apply", "--server-side", "--dry-run=server", "--force-conflicts", "--field-manager=deploy-test"],
      ...namespaced,
      ...["-f", file],
    );
    expect(stdout.trim().split("\n")).toHaveLength(objects.length);
  });
});

describe("the layers", () => {
  it("an image digest pinned by the sector, then by a region, is that region's image", async () => {
    const digest = async (path: string, deployment: string) =>
      container((await render(`config/${path}`)).objects, deployment).image;
    const global = await digest("global/service", "hcp-operators");
    const sector = await digest("sectors/americas/service", "hcp-operators");
    const westus3 = await digest("clusters/svc-westus3", "hcp-operators");
    expect(new Set([global, sector, westus3]).size).toBe(3);
    expect(await digest("clusters/svc-eastus", "hcp-operators")).toBe(sector);
    expect(await digest("clusters/svc-eastus", "hcp-frontend")).toBe(sector);
    expect(await digest("clusters/westus3-mgmt-1", "maestro-agent")).toBe(westus3);
    expect(await digest("clusters/eastus-mgmt-1", "maestro-agent")).toBe(
      await digest("sectors/americas/management", "maestro-agent"),
    );
  });

  it("region values set at global are the region's in its clusters, cluster values the cluster's", async () => {
    const global = hcpRegion((await render("config/global/service")).objects);
    const eastus = hcpRegion((await render("config/clusters/svc-eastus")).objects);
    const westus3 = hcpRegion((await render("config/clusters/svc-westus3")).objects);
    expect(global["HCP_BROKER_URL"]).toBe("mqtts://broker.hcp.example.com:8883");
    expect(eastus["HCP_BROKER_URL"]).toBe("mqtts://broker.eastus.hcp.example.com:8883");
    expect(westus3["HCP_BASE_DOMAIN"]).toBe("westus3.hcp.example.com");
    expect(global["HCP_ENVIRONMENT"]).not.toBe(eastus["HCP_ENVIRONMENT"]);
    expect(eastus["HCP_ENVIRONMENT"]).toBe("prod-americas");
    // Not overridden below global: inherited as it is.
    expect(eastus["HCP_KEYVAULT"]).toBe(global["HCP_KEYVAULT"]);
    expect([eastus["HCP_FRONTEND_MAX_CONNECTIONS"], westus3["HCP_FRONTEND_MAX_CONNECTIONS"]]).toEqual([
      "4000",
      "1500",
    ]);
    const agent = hcpRegion((await render("config/clusters/eastus-mgmt-2")).objects);
    expect(agent).toMatchObject({
      HCP_CONSUMER: "eastus-mgmt-2",
      HCP_BROKER_URL: "mqtts://broker.eastus.hcp.example.com:8883",
    });
  });

  it("replicas: global's, and one region's own", async () => {
    const replicas = async (path: string, name: string) =>
      (find((await render(path)).objects, "Deployment", name).spec as { replicas: number }).replicas;
    expect(await replicas("config/global/service", "hcp-frontend")).toBe(2);
    expect(await replicas("config/clusters/svc-westus3", "hcp-frontend")).toBe(2);
    expect(await replicas("config/clusters/svc-eastus", "hcp-frontend")).toBe(3);
  });

  it("each management cluster is registered in its region with its capacity, or the default", async () => {
    const registrations = (await render("config/clusters/svc-eastus")).objects.filter(
      (o) => o.kind === "ManagementCluster",
    );
    expect(registrations.map((m) => [m.metadata.name, m.spec])).toEqual([
      [
        "eastus-mgmt-1",
        expect.objectContaining({
          consumerName: "eastus-mgmt-1",
          region: "eastus",
          capacity: { maxHostedClusters: 50 },
        }),
      ],
      [
        "eastus-mgmt-2",
        expect.objectContaining({
          consumerName: "eastus-mgmt-2",
          region: "eastus",
          capacity: { maxHostedClusters: 80 },
        }),
      ],
    ]);
  });

  it("the agent's egress goes to its region's broker and its own apiserver", async () => {
    const policy = find(
      (await render("config/clusters/westus3-mgmt-2")).objects,
      "NetworkPolicy",
      "maestro-agent",
    );
    const egress = (policy.spec as { egress: Array<{ to: Array<{ ipBlock?: { cidr: string } }> }> }).egress;
    expect(egress.map((e) => e.to[0]?.ipBlock?.cidr)).toEqual([
      "203.0.113.10/32",
      "203.0.113.22/32",
      undefined,
    ]);
  });
});

describe("network policies", () => {
  interface Rule {
    from?: unknown[];
    to?: unknown[];
    ports?: Array<{ port: number }>;
  }
  const policy = async (path: string, name: string) =>
    find((await render(path)).objects, "NetworkPolicy", name).spec as {
      policyTypes: string[];
      ingress?: Rule[];
      egress?: Rule[];
    };

  it("open the frontend to everyone on its ARM port only, and its metrics to Prometheus", async () => {
    const { ingress = [] } = await policy("config/clusters/svc-eastus", "hcp-frontend");
    const open = ingress.filter((r) => !r.from).flatMap((r) => r.ports?.map((p) => p.port));
    expect(open).toEqual([8443]);
    expect(ingress.filter((r) => r.from).flatMap((r) => r.ports?.map((p) => p.port))).toEqual([8081]);
  });

  it("let the agent out to the broker, its apiserver and DNS only", async () => {
    const spec = await policy("config/clusters/eastus-mgmt-1", "maestro-agent");
    expect(spec.policyTypes).toContain("Egress");
    expect((spec.egress ?? []).map((r) => r.ports?.map((p) => p.port))).toEqual([
      [8883],
      [443, 6443],
      [53, 53],
    ]);
    expect((spec.egress ?? []).every((r) => (r.to ?? []).length > 0)).toBe(true);
  });
});

describe("the production shape of every cluster", () => {
  const CLUSTERS = ALL.filter((p) => /^config\/clusters\/[^/]+$/.test(p));

  it.each(CLUSTERS)("%s", async (path) => {
    const { objects } = await render(path);
    const deployments = objects.filter((o) => o.kind === "Deployment");
    expect(deployments.length).toBeGreaterThan(0);
    for (const d of deployments) expectProductionShape(d, objects);
    const operators = deployments.find((d) => d.metadata.name === "hcp-operators");
    if (operators) expect(template(operators).spec.containers[0]?.args).toContain("--leader-elect");
    const wildcards = objects
      .filter((o) => o.kind === "ClusterRole" || o.kind === "Role")
      .filter((o) => (o.rules ?? []).some((r) => r.verbs.includes("*")))
      .map((o) => o.metadata.name);
    expect(wildcards).toEqual([]);
  });
});

describe("GitOps", () => {
  it("each region's ApplicationSet deploys each of its clusters' overlays, every cluster once", async () => {
    const deployed: string[] = [];
    for (const region of ["eastus", "westus3"]) {
      const { objects } = await render(`config/gitops/regions/${region}`);
      const set = find(objects, "ApplicationSet", `hcp-${region}`).spec as {
        generators: Array<{ list: { elements: Array<{ cluster: string }> } }>;
        template: { spec: { source: { path: string }; syncPolicy: { syncOptions: string[] } } };
      };
      expect(set.template.spec.source.path).toBe("config/clusters/{{.cluster}}");
      expect(set.template.spec.syncPolicy.syncOptions).toContain("ServerSideApply=true");
      const clusters = set.generators.flatMap((g) => g.list.elements.map((e) => e.cluster));
      expect(clusters.every((c) => c === `svc-${region}` || c.startsWith(`${region}-`))).toBe(true);
      deployed.push(...clusters);
    }
    const overlays = ALL.filter((p) => /^config\/clusters\/[^/]+$/.test(p)).map((p) => p.split("/")[2]);
    expect(deployed.sort()).toEqual(overlays.sort());
  });
});
