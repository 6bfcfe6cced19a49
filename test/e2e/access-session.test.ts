/**
 * SRE access sessions end to end on the local region (issue 36): people signed in through Dex ask
 * for sessions with hcpctl, the session controller mints a certificate through the hosted control
 * plane's SRE break-glass signer (a CSR and HyperShift's approval over MQTT to the simulator),
 * and kubectl reaches the demo cluster's real kube-apiserver only through the session gate, as
 * the session's owner, only while the session is approved, unexpired and unrevoked.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretResource } from "../../operators/api/core.ts";
import { AccessSessionResource, type AccessSession } from "../../operators/api/v1alpha1/accesssession.ts";
import { HcpClusterResource, type HcpCluster } from "../../operators/api/v1alpha1/index.ts";
import { ManifestWorkResource } from "../../operators/api/work/v1.ts";
import { WORK_LABELS } from "../../operators/api/v1alpha1/labels.ts";
import { createLogger } from "../../operators/runtime/logger.ts";
import { startSreAccess, type SreAccess, type SrePerson } from "../../hack/harness/sre-access.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { GateClient, readyAtOwnApi } from "../support/gate-client.ts";
import { runHcpctl } from "../support/hcpctl-run.ts";
import { clusterInfo, region } from "../support/region.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const READY_MS = 90_000;
const service = clientFor("service");
const customer = `as-${process.pid}`;
const CLUSTER = "sg";
/** The HostedCluster's name: the cluster's DNS prefix. */
const PREFIX = `sg${process.pid % 100000}`;
/** How far ahead of the wall clock the session controller's clock runs (the expiry test moves it). */
let clockAheadMs = 0;
let running: TestStack | undefined;
let sre: SreAccess;

let namespace = "";
let scratch = "";
let gate: GateClient;

const person = (username: string): SrePerson => {
  const p = sre.people.find((x) => x.username === username);
  if (!p) throw new Error(`no person ${username}`);
  return p;
};

const getSession = (name: string) => service.find<AccessSession>(AccessSessionResource, name);

/** hcpctl in this process, as a person on the service cluster. */
const hcpctlAs = (who: SrePerson, ...args: string[]) =>
  runHcpctl("--kubeconfig", who.kubeconfigPath, ...args);

async function request(who: SrePerson, level: "Admin" | "ReadOnly", ttl = "1h"): Promise<string> {
  const r = await hcpctlAs(
    who,
    "session",
    "request",
    CLUSTER,
    "-n",
    customer,
    "--level",
    level,
    "--reason",
    "incident 42",
    "--ttl",
    ttl,
  );
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  const name = /accesssession\/(\S+) requested/.exec(r.stdout)?.[1];
  if (!name) throw new Error(`no session in: ${r.stdout}`);
  return name;
}

const sessionKubeconfig = (who: SrePerson, name: string): Promise<string> => gate.kubeconfig(who, name);
const kubectlAs = (who: SrePerson, kubeconfig: string, ...args: string[]) =>
  gate.kubectl(who, kubeconfig, ...args);

async function phaseIs(name: string, phase: string, timeoutMs = 30_000): Promise<AccessSession> {
  await eventually(
    `session ${name} ${phase}`,
    async () => (await getSession(name))?.status?.phase === phase,
    timeoutMs,
  ).catch(async (err: unknown) => {
    throw new Error(`${String(err)}: ${JSON.stringify((await getSession(name))?.status)}`);
  });
  return (await getSession(name))!;
}

const secretGone = async (name: string) =>
  (await service.find(SecretResource, `access-session-${name}`, namespace)) === undefined;

beforeAll(async () => {
  scratch = await mkdtemp(join(region().workDir, "sessions-"));
  running = await startTestStack("sessions", {
    log: process.env["AS_DEBUG"] ? createLogger({ component: "test" }) : undefined,
    simulator: { provisionDelayMs: 500, deleteDelayMs: 200 },
    accessSessions: {
      now: () => Date.now() + clockAheadMs,
      policy: { maxTtlSeconds: { ReadOnly: 43_200, Admin: 7_200 } },
    },
    hostedApis: {
      hostedClusters: [PREFIX],
      assetsDir: region().assetsDir,
      etcdUrl: region().etcdUrl,
      workDir: scratch,
    },
  });
  namespace = running.stack.namespace;
  sre = await startSreAccess({
    workDir: scratch,
    serviceApiServerDir: join(region().workDir, "service"),
    serviceServer: clusterInfo("service").url,
    admin: service,
    namespace,
  });
  gate = new GateClient(sre, scratch);
  await service.create(namespaceType, { metadata: { name: customer } });
  const c = sampleCluster();
  c.metadata = { name: CLUSTER, namespace: customer };
  c.spec.dns.baseDomainPrefix = PREFIX;
  delete c.spec.placement;
  await service.create(HcpClusterResource, c);
  // Ready, and its API served by the real kube-apiserver the harness started for it.
  await eventually(
    "the cluster Ready at its real API server",
    () =>
      readyAtOwnApi(service, running?.stack, { namespace: customer, name: CLUSTER, hostedCluster: PREFIX }),
    READY_MS,
  ).catch(async (err: unknown) => {
    const c = await service.find<HcpCluster>(HcpClusterResource, CLUSTER, customer);
    const served = running?.stack.hostedApi(PREFIX)?.url ?? "none";
    throw new Error(
      `${String(err)}: apiURL ${c?.status?.apiURL ?? "none"}, served ${served}, ${JSON.stringify(c?.status?.conditions?.filter((x) => x.status !== "True"))}`,
    );
  });
}, READY_MS + 60_000);

afterAll(async () => {
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
  await sre?.stop();
  await running?.stop();
});

describe("SRE access sessions through the gate", () => {
  it("serves the hosted cluster's real API through the gate to the owner of an approved session only, until it is revoked", async () => {
    const alice = person("alice");
    const bob = person("bob");
    const name = await request(alice, "Admin");
    const kubeconfig = await sessionKubeconfig(alice, name);

    // Before approval the gate refuses, and says why.
    // A raw GET shows the gate's Status message (kubectl's discovery prints only "unknown").
    const early = await kubectlAs(alice, kubeconfig, "get", "--raw", "/api/v1/namespaces");
    expect(early.ok).toBe(false);
    expect(early.out).toMatch(/Error from server \(Forbidden\): session \S+ cannot be used: NotApproved/);
    // The owner cannot approve their own session.
    const self = await hcpctlAs(alice, "session", "approve", name);
    expect(self.code).not.toBe(0);
    expect(self.stderr).toMatch(/is yours: another person must decide/);

    expect((await hcpctlAs(bob, "session", "approve", name)).code).toBe(0);
    const active = await phaseIs(name, "Active", 60_000);
    expect(active.status?.credentialSubject).toBe(`system:sre-break-glass:${alice.email}:${name}`);

    const ok = await kubectlAs(alice, kubeconfig, "get", "namespaces", "-o", "name");
    expect(ok.out).toContain("namespace/kube-system");
    expect(ok.ok).toBe(true);
    // Admin: it can write.
    const created = await kubectlAs(alice, kubeconfig, "create", "namespace", `made-by-${name}`);
    expect(created.ok, created.out).toBe(true);

    // The hosted apiserver saw the session's identity, the owner's name in it.
    const hosted = running!.stack.hostedApi(PREFIX);
    const audit = await readFile(hosted!.auditLogPath, "utf8");
    expect(audit).toContain(`system:sre-break-glass:${alice.email}:${name}`);

    // Another SRE, signed in as themselves, is refused on alice's session.
    const stranger = await kubectlAs(bob, kubeconfig, "get", "--raw", "/api/v1/namespaces");
    expect(stranger.ok).toBe(false);
    expect(stranger.out).toContain(`belongs to another user, not ${bob.email}`);

    expect((await hcpctlAs(alice, "session", "revoke", name)).code).toBe(0);
    await eventually(
      "the revocation refused by the gate",
      async () => !(await kubectlAs(alice, kubeconfig, "get", "--raw", "/api/v1/namespaces")).ok,
    );
    expect((await kubectlAs(alice, kubeconfig, "get", "--raw", "/api/v1/namespaces")).out).toMatch(
      /cannot be used: Revoked/,
    );
    await phaseIs(name, "Revoked");
    await eventually("the session's key deleted", () => secretGone(name));
    await eventually(
      "the session's work deleted",
      async () =>
        (
          await service.list(ManifestWorkResource, {
            labelSelector: `${WORK_LABELS.accessSession}=${active.metadata.uid}`,
          })
        ).items.length === 0,
    );
  });

  it("approves a read-only session by policy, and the gate lets it read only", async () => {
    const reader = person("bob");
    const name = await request(reader, "ReadOnly");
    const s = await phaseIs(name, "Active", 60_000);
    expect(s.spec.approval).toMatchObject({ decision: "Approved", by: "policy" });
    const kubeconfig = await sessionKubeconfig(reader, name);
    expect((await kubectlAs(reader, kubeconfig, "get", "pods", "-A")).ok).toBe(true);
    const write = await kubectlAs(reader, kubeconfig, "create", "namespace", `nope-${name}`);
    expect(write.ok).toBe(false);
    expect(write.out).toMatch(/is ReadOnly: only get, list and watch/);
  });

  it("refuses a session longer than the region allows, naming the limit", async () => {
    const name = await request(person("alice"), "Admin", "3h");
    const s = await phaseIs(name, "Failed");
    const why = s.status?.conditions?.find((c) => c.type === "Approved");
    expect(why).toMatchObject({ status: "False", reason: "TTLExceedsPolicy" });
    expect(why?.message).toMatch(
      /spec.ttlSeconds 10800 exceeds the region's limit of 7200 seconds for Admin sessions/,
    );
  });

  it("ends at its expiry: the gate refuses from then on and the key is deleted", async () => {
    const alice = person("alice");
    const name = await request(alice, "ReadOnly");
    await phaseIs(name, "Active", 60_000);
    const kubeconfig = await sessionKubeconfig(alice, name);
    expect((await kubectlAs(alice, kubeconfig, "get", "namespaces")).ok).toBe(true);
    clockAheadMs = 2 * 3600_000;
    // The controller looks again at the expiry it computed; a change of the session brings it back now.
    await service.mergePatch(
      AccessSessionResource,
      { name },
      { metadata: { annotations: { "test/nudge": "1" } } },
    );
    await phaseIs(name, "Expired");
    await eventually("the key deleted", () => secretGone(name));
    const late = await kubectlAs(alice, kubeconfig, "get", "--raw", "/api/v1/namespaces");
    expect(late.ok).toBe(false);
    expect(late.out).toMatch(/cannot be used: (Expired|CredentialPending)/);
    clockAheadMs = 0;
  });
});
