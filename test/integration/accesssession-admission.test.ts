/**
 * Who may set what on an AccessSession, on the real apiserver: the CRD's rules (immutable spec,
 * approval and revocation set once) and the admission policy hcp-access-sessions
 * (config/bases/operators/admission.yaml) with the people's roles of
 * config/bases/operators/access-sessions-rbac.yaml bound to groups, as a region binds them.
 * People are real client certificates (test/support/people.ts), not impersonation.
 */
import { readFile } from "node:fs/promises";
import { loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installAdmission, removeAdmission } from "../../hack/harness/admission.ts";
import {
  ACCESS_SESSION_KIND,
  ACCESS_SESSION_FINALIZER,
  AccessSessionResource,
  type AccessSession,
  type AccessSessionSpec,
} from "../../operators/api/v1alpha1/accesssession.ts";
import { API_VERSION } from "../../operators/api/v1alpha1/meta.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, tempNamespace } from "../support/fixtures.ts";
import { person, type Person } from "../support/people.ts";

const service = clientFor("service");
const rbac = (plural: string, kind: string): ResourceType => ({
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural,
  kind,
  namespaced: false,
});
const ClusterRole = rbac("clusterroles", "ClusterRole");
const ClusterRoleBinding = rbac("clusterrolebindings", "ClusterRoleBinding");
const ROLES = new URL("../../config/bases/operators/access-sessions-rbac.yaml", import.meta.url);

const suffix = `${process.pid}-${Date.now().toString(36)}`;
const SRE = `sre-${suffix}`;
const APPROVERS = `approvers-${suffix}`;
const sessions: string[] = [];
const bindings: string[] = [];
let ns: Awaited<ReturnType<typeof tempNamespace>>;
let alice: Person;
let bob: Person;
let carol: Person;

function spec(owner: string, level: AccessSessionSpec["level"] = "Admin"): AccessSessionSpec {
  return {
    owner,
    clusterRef: { namespace: ns.name, name: "demo" },
    level,
    reason: "incident 42",
    ttlSeconds: 3600,
  };
}

async function request(who: KubeClient, s: AccessSessionSpec): Promise<string> {
  const name = `as-${suffix}-${sessions.length}`;
  sessions.push(name);
  await who.create<AccessSession>(AccessSessionResource, {
    apiVersion: API_VERSION,
    kind: ACCESS_SESSION_KIND,
    metadata: { name },
    spec: s,
  });
  return name;
}

const patch = (who: KubeClient, name: string, specPatch: Partial<AccessSessionSpec>) =>
  who.mergePatch(AccessSessionResource, { name }, { spec: specPatch });

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  return "";
}

beforeAll(async () => {
  ns = await tempNamespace(service, "sessions");
  await installAdmission(service, ns.name);
  for (const role of loadAll(await readFile(ROLES, "utf8")) as KubeObject[])
    await service.apply(ClusterRole, role, { fieldManager: "test", force: true });
  const bind = async (role: string, group: string) => {
    const name = `${role}-${group}-${suffix}`;
    bindings.push(name);
    await service.create(ClusterRoleBinding, {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
      subjects: [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: group }],
    });
  };
  // Groups of this file alone: the shared apiserver may hold other bindings of `sre` (the SRE
  // access harness binds it to both roles, as the local region does).
  await bind("hcp-session-requester", SRE);
  await bind("hcp-session-approver", APPROVERS);
  [alice, bob, carol] = await Promise.all([
    person("service", "alice@example.com", [SRE]),
    person("service", "bob@example.com", [SRE]),
    person("service", "carol@example.com", [APPROVERS]),
  ]);
  // The policy takes effect a moment after it is stored: wait for its first refusal.
  await eventually("the session admission policy in effect", async () =>
    (await refusal(request(alice.client, spec(bob.name)))).includes("spec.owner"),
  );
}, 60_000);

afterAll(async () => {
  for (const name of sessions) {
    await service
      .mergePatch(AccessSessionResource, { name }, { metadata: { finalizers: null } })
      .catch(() => undefined);
    await service.delete(AccessSessionResource, { name });
  }
  for (const name of bindings) await service.delete(ClusterRoleBinding, { name });
  await removeAdmission(service).catch(() => undefined);
  await ns?.remove();
});

describe("AccessSession admission", () => {
  it("carries the session controller's finalizer from its creation", async () => {
    const name = await request(alice.client, spec(alice.name));
    const s = await service.find<AccessSession>(AccessSessionResource, name);
    expect(s?.metadata.finalizers).toContain(ACCESS_SESSION_FINALIZER);
  });

  it("is requested by its owner only, undecided", async () => {
    expect(await refusal(request(alice.client, spec(bob.name)))).toMatch(
      /spec\.owner: a session is requested by its owner; you are "alice@example.com"/,
    );
    const decided = { ...spec(alice.name), approval: { decision: "Approved" as const, by: carol.name } };
    expect(await refusal(request(alice.client, decided))).toMatch(/created undecided/);
    // RBAC first: an approver who is no requester cannot ask at all.
    expect(await refusal(request(carol.client, spec(carol.name)))).toMatch(/forbidden/i);
  });

  it("is approved by an approver who is not its owner, in their own name, once", async () => {
    const name = await request(alice.client, spec(alice.name));
    expect(
      await refusal(patch(alice.client, name, { approval: { decision: "Approved", by: alice.name } })),
    ).toMatch(/alice@example.com owns this session; another person must decide on it/);
    expect(
      await refusal(patch(bob.client, name, { approval: { decision: "Approved", by: bob.name } })),
    ).toMatch(/only an approver \(the approve verb on accesssessions\) decides/);
    expect(
      await refusal(
        patch(carol.client, name, { approval: { decision: "Approved", by: "dave@example.com" } }),
      ),
    ).toMatch(/in their own name; you are "carol@example.com"/);
    expect(
      await refusal(patch(carol.client, name, { approval: { decision: "Approved", by: "policy" } })),
    ).toMatch(/only an approver|policy approves read-only sessions only/);
    await patch(carol.client, name, { approval: { decision: "Approved", by: carol.name } });
    expect(
      await refusal(patch(carol.client, name, { approval: { decision: "Denied", by: carol.name } })),
    ).toMatch(/spec.approval is set once/);
  });

  it("lets only the broker approve by policy, and only read-only sessions", async () => {
    const admin = await request(alice.client, spec(alice.name, "Admin"));
    expect(
      await refusal(patch(service, admin, { approval: { decision: "Approved", by: "policy" } })),
    ).toMatch(/policy approves read-only sessions only/);
    const readOnly = await request(alice.client, spec(alice.name, "ReadOnly"));
    await patch(service, readOnly, { approval: { decision: "Approved", by: "policy" } });
  });

  it("is revoked by its owner or an approver, in their own name, once", async () => {
    const name = await request(alice.client, spec(alice.name));
    expect(await refusal(patch(bob.client, name, { revocation: { by: bob.name } }))).toMatch(
      /the owner or an approver revokes/,
    );
    expect(await refusal(patch(alice.client, name, { revocation: { by: bob.name } }))).toMatch(
      /the owner or an approver revokes, in their own name/,
    );
    await patch(alice.client, name, { revocation: { by: alice.name } });
    expect(
      await refusal(patch(alice.client, name, { revocation: { by: alice.name, reason: "again" } })),
    ).toMatch(/spec.revocation is set once/);
    const other = await request(bob.client, spec(bob.name));
    await patch(carol.client, other, { revocation: { by: carol.name, reason: "done" } });
  });

  it("keeps what was asked: owner, cluster, level, reason and TTL are immutable", async () => {
    const name = await request(alice.client, spec(alice.name, "ReadOnly"));
    expect(await refusal(patch(alice.client, name, { level: "Admin" }))).toMatch(/immutable/);
    expect(await refusal(patch(alice.client, name, { ttlSeconds: 43_200 }))).toMatch(/immutable/);
    expect(await refusal(request(alice.client, { ...spec(alice.name), ttlSeconds: 60 }))).toMatch(
      /spec.ttlSeconds/,
    );
  });
});
