/**
 * Least privilege, proven: each component's ServiceAccount, with only the RBAC of config/, asks
 * the apiserver what it may do (SelfSubjectRulesReview, as that ServiceAccount) in its own
 * namespace, and the answer, beyond what every authenticated identity may do, must be exactly the
 * committed allow-list (rbac-allowlist.yaml). On top: no `*` verb anywhere, the agent cannot list
 * or watch Secrets, the frontend cannot touch ManifestWorks or Secrets, the operators can only
 * create a Secret outside their own namespace, and what a namespace's Role grants reaches no other
 * namespace.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { load } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDir } from "../support/fixtures.ts";
import { ensureNamespaceExists, kubectl } from "../support/rbac.ts";

interface Component {
  cluster: string;
  serviceAccount: string;
  namespace: string;
  config: string;
  rules: Record<string, string[]>;
}

interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

interface RulesReview {
  status: { resourceRules: ResourceRule[]; incomplete: boolean; evaluationError?: string };
}

/** Verbs by `<resource>.<group>` (`/<name>` appended for a rule limited to names). */
type Grants = Map<string, Set<string>>;

const allowList = load(await readFile(new URL("rbac-allowlist.yaml", import.meta.url), "utf8")) as Record<
  string,
  Component
>;

let scratch: { path: string; remove(): Promise<void> };

/** The identity a ServiceAccount token carries. */
function impersonate(namespace: string, serviceAccount: string): string[] {
  return [
    `--as=system:serviceaccount:${namespace}:${serviceAccount}`,
    "--as-group=system:serviceaccounts",
    `--as-group=system:serviceaccounts:${namespace}`,
  ];
}

async function rulesReview(
  c: Pick<Component, "cluster" | "namespace">,
  serviceAccount: string,
  namespace: string,
) {
  const file = join(scratch.path, `review-${c.cluster}-${serviceAccount}-${namespace}.json`);
  const review = {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SelfSubjectRulesReview",
    spec: { namespace },
  };
  await writeFile(file, JSON.stringify(review));
  const { stdout } = await kubectl(
    c.cluster,
    "create",
    // kubectl's client-side validation would list CRDs, which the identity may not.
    "--validate=false",
    "-f",
    file,
    "-o",
    "json",
    ...impersonate(c.namespace, serviceAccount),
  );
  const { status } = JSON.parse(stdout) as RulesReview;
  expect(status.incomplete, status.evaluationError).toBe(false);
  return grantsOf(status.resourceRules);
}

/** The `<resource>.<group>` keys of one rule. */
function keysOf(rule: ResourceRule): string[] {
  const bases = (rule.apiGroups ?? [""]).flatMap((group) =>
    (rule.resources ?? []).map((resource) => (group ? `${resource}.${group}` : resource)),
  );
  const names = rule.resourceNames ?? [];
  return names.length === 0 ? bases : bases.flatMap((base) => names.map((n) => `${base}/${n}`));
}

function grantsOf(rules: ResourceRule[]): Grants {
  const grants: Grants = new Map();
  for (const rule of rules) {
    for (const key of keysOf(rule)) grants.set(key, new Set([...(grants.get(key) ?? []), ...rule.verbs]));
  }
  return grants;
}

/** What `grants` adds to `baseline`, as sorted verb lists. */
function beyond(grants: Grants, baseline: Grants): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, verbs] of grants) {
    const extra = [...verbs].filter((v) => !baseline.get(key)?.has(v)).sort();
    if (extra.length > 0) out[key] = extra;
  }
  return out;
}

/** A namespace of no component: what a component may do there is what it may do anywhere. */
const elsewhere = `least-privilege-${process.pid}`;
const applied = new Set<string>();

beforeAll(async () => {
  scratch = await scratchDir("least-privilege");
  for (const c of Object.values(allowList)) {
    const key = `${c.cluster} ${c.config}`;
    if (applied.has(key)) continue;
    await ensureNamespaceExists(c.cluster, c.namespace);
    await kubectl(c.cluster, "apply", "--server-side", "--force-conflicts", "-k", c.config);
    applied.add(key);
  }
}, 150_000);

afterAll(async () => {
  await scratch?.remove();
});

describe("least privilege, proven against the apiserver", () => {
  for (const [name, component] of Object.entries(allowList)) {
    it(`${name}: exactly the allow-list in its namespace, and no more elsewhere`, async () => {
      const baseline = await rulesReview(component, "least-privilege-nobody", component.namespace);
      const granted = beyond(
        await rulesReview(component, component.serviceAccount, component.namespace),
        baseline,
      );
      expect(granted).toEqual(sortedRules(component.rules));
      for (const verbs of Object.values(granted)) expect(verbs).not.toContain("*");

      // In a namespace of nobody only the ClusterRole's grants remain; they are part of the list.
      const outside = beyond(await rulesReview(component, component.serviceAccount, elsewhere), baseline);
      for (const [key, verbs] of Object.entries(outside))
        expect(component.rules[key]).toEqual(expect.arrayContaining(verbs));
    });
  }

  it("neither the agent nor the operators can enumerate Secrets; the frontend cannot touch ManifestWorks and only reads Secrets by name", async () => {
    const can = async (c: Component, verb: string, resource: string) => {
      const { stdout } = await kubectl(
        c.cluster,
        "auth",
        "can-i",
        verb,
        resource,
        "-n",
        elsewhere,
        ...impersonate(c.namespace, c.serviceAccount),
      ).catch((err: { stdout?: string; code?: number }) => ({ stdout: err.stdout ?? "" }));
      return stdout.trim();
    };
    const { agent, frontend, operators } = allowList as {
      agent: Component;
      frontend: Component;
      operators: Component;
    };
    for (const verb of ["list", "watch"])
      expect([verb, await can(agent, verb, "secrets")]).toEqual([verb, "no"]);
    for (const verb of ["get", "list", "create", "update", "patch", "delete"]) {
      expect([verb, await can(frontend, verb, "manifestworks.work.open-cluster-management.io")]).toEqual([
        verb,
        "no",
      ]);
      // It reads one Secret by name (a break-glass credential's kubeconfig) and nothing else.
      expect([verb, await can(frontend, verb, "secrets")]).toEqual([verb, verb === "get" ? "yes" : "no"]);
    }
    // Outside hcp-system the operators only publish a break-glass kubeconfig: they cannot read,
    // change or delete any Secret there (its deletion is the garbage collector's).
    for (const verb of ["get", "list", "watch", "update", "patch", "delete"])
      expect([verb, await can(operators, verb, "secrets")]).toEqual([verb, "no"]);
    expect(await can(operators, "create", "secrets")).toBe("yes");
  });
});

function sortedRules(rules: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(rules).map(([k, v]) => [k, [...v].sort()]));
}
