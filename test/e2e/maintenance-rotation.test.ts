/**
 * A service-account signing-key rotation as an SRE starts it: a MaintenanceTask
 * RotateServiceAccountSigningKey for one Ready cluster, against the real apiservers, the real
 * agent transport (maestro-server, MQTT, maestro-agent), the HyperShift simulator and the storage
 * emulator over https. A token signed with the old key before the rotation verifies against the
 * published JWKS during the rotation and after the switch, until its key is retired; a token
 * signed after the switch carries the new key's kid and verifies. The maintenance controller
 * stopped while SwitchSigningKey waits for the management cluster, and a new one started, finish
 * the same run: one run, one Started, one next key made. The run ends after the switch; the
 * retired key's time is a few seconds here (the cluster controller's signingKeys), and the cluster
 * controller drops it from the JWKS when it passes, followed by the cluster's status.
 */
import { createPublicKey, createSign, createVerify, randomUUID, type JsonWebKey } from "node:crypto";
import { readFile } from "node:fs/promises";
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretResource } from "../../operators/api/core.ts";
import { SIGNING_KEY_ID_ANNOTATION } from "../../operators/api/v1alpha1/feedback.ts";
import {
  HcpClusterResource,
  MAINTENANCE_LABELS,
  MaintenanceRunResource,
  MaintenanceTaskResource,
  type HcpCluster,
  type MaintenanceRun,
  type MaintenanceTask,
} from "../../operators/api/v1alpha1/index.ts";
import { keyId } from "../../operators/cluster/signing-keyring.ts";
import { eventType } from "../../operators/runtime/events.ts";
import type { KubeObject } from "../../operators/runtime/kube.ts";
import { clientFor, eventually, namespaceType } from "../support/fixtures.ts";
import { sampleCluster } from "../support/samples.ts";
import { startTestStack, type TestStack } from "../support/stack.ts";

const service = clientFor("service");
const customer = `rotation-${process.pid}`;
const READY_MS = 90_000;
/** The longest token lifetime the rotation assumes, and the allowance for the switch to roll out. */
const TOKEN_LIFETIME_MS = 30_000;
const ROLLOUT_MS = 2_000;

type SecretObject = KubeObject & { data?: Record<string, string> };
type Verdict = "valid" | "unknown key" | "expired" | "bad signature";

let running: TestStack;
let ca: string;

beforeAll(async () => {
  running = await startTestStack("rotation", {
    simulator: { provisionDelayMs: 300, deleteDelayMs: 100 },
    signingKeys: { maxTokenLifetimeMs: TOKEN_LIFETIME_MS, rolloutAllowanceMs: ROLLOUT_MS },
  });
  ca = await readFile(running.storage.caPath, "utf8");
  await service.create(namespaceType, { metadata: { name: customer } });
}, 120_000);

afterAll(async () => {
  // Deleted while the controllers run, so nothing is left in Azure or on the management cluster.
  await service.delete(HcpClusterResource, { name: "rot", namespace: customer }).catch(() => undefined);
  await eventually(
    "the cluster deleted",
    async () => !(await service.find(HcpClusterResource, "rot", customer)),
    READY_MS,
  ).catch(() => undefined);
  await running?.stop();
  await service.delete(namespaceType, { name: customer }).catch(() => undefined);
});

const getCluster = async (name: string): Promise<HcpCluster> =>
  (await service.find<HcpCluster>(HcpClusterResource, name, customer)) ?? ({} as HcpCluster);

const conditionOf = (c: HcpCluster, type: string) => c.status?.conditions?.find((x) => x.type === type);

/** The keyring's Secret the cluster controller keeps in the operators' namespace. */
async function keyring(uid: string): Promise<{ active: string; next?: string }> {
  const s = await service.find<SecretObject>(
    SecretResource,
    `sa-signing-key-${uid}`,
    running.stack.namespace,
  );
  const decode = (k: string) => (s?.data?.[k] ? Buffer.from(s.data[k], "base64").toString() : undefined);
  const next = decode("next");
  return { active: decode("key") ?? "", ...(next ? { next } : {}) };
}

function fetchText(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    })
      .on("error", reject)
      .end();
  });
}

async function publishedKeys(issuer: string): Promise<JsonWebKey[]> {
  const r = await fetchText(`${issuer}/openid/v1/jwks`);
  expect(r.status, r.body).toBe(200);
  return (JSON.parse(r.body) as { keys: JsonWebKey[] }).keys;
}

/** An RS256 token as the hosted kube-apiserver signs it: the key's kid, an exp TOKEN_LIFETIME_MS away. */
function signToken(privateKeyPem: string, issuer: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Date.now();
  const header = b64({ alg: "RS256", typ: "JWT", kid: keyId(privateKeyPem) });
  const payload = b64({
    iss: issuer,
    sub: "system:serviceaccount:openshift-cluster-csi-drivers:azure-disk-csi-driver-operator",
    aud: ["api://AzureADTokenExchange"],
    iat: Math.floor(now / 1000),
    exp: Math.floor((now + TOKEN_LIFETIME_MS) / 1000),
  });
  const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(privateKeyPem, "base64url");
  return `${header}.${payload}.${signature}`;
}

const kidOf = (token: string): string =>
  (JSON.parse(Buffer.from(token.split(".")[0] ?? "", "base64url").toString()) as { kid: string }).kid;

/** What a relying party (Entra ID) makes of a token with the JWKS published now. */
async function verify(token: string, issuer: string): Promise<Verdict> {
  const [header = "", payload = "", signature = ""] = token.split(".");
  const jwk = (await publishedKeys(issuer)).find((k) => k.kid === kidOf(token));
  if (!jwk) return "unknown key";
  const key = createPublicKey({ key: jwk, format: "jwk" });
  if (!createVerify("RSA-SHA256").update(`${header}.${payload}`).verify(key, signature, "base64url"))
    return "bad signature";
  const { exp } = JSON.parse(Buffer.from(payload, "base64url").toString()) as { exp: number };
  return exp * 1000 > Date.now() ? "valid" : "expired";
}

async function runsOf(task: string): Promise<MaintenanceRun[]> {
  const list = await service.list<MaintenanceRun>(MaintenanceRunResource, {
    namespace: customer,
    labelSelector: `${MAINTENANCE_LABELS.task}=${task}`,
  });
  return list.items;
}

async function theRun(task: string): Promise<MaintenanceRun | undefined> {
  return (await runsOf(task))[0];
}

const stepOf = (run: MaintenanceRun | undefined, name: string) =>
  run?.status?.steps?.find((s) => s.name === name);

/** Every `next` key the keyring's Secret held, from a watch begun before the rotation. */
function watchNextKeys(uid: string, namespace: string, signal: AbortSignal): Promise<Set<string>> {
  const seen = new Set<string>();
  return (async () => {
    const events = service.watch<SecretObject>(SecretResource, {
      namespace,
      fieldSelector: `metadata.name=sa-signing-key-${uid}`,
      signal,
    });
    try {
      for await (const e of events) {
        const next = e.object.data?.["next"];
        if (next) seen.add(keyId(Buffer.from(next, "base64").toString()));
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
    return seen;
  })();
}

/** What one `it` leaves the next: the cluster, its keys, the tokens, the run before the stop. */
interface Rotation {
  uid: string;
  issuer: string;
  mgmt: string;
  hostedNamespace: string;
  oldKid: string;
  oldToken: string;
  newKid: string;
  taskName: string;
  waiting?: MaintenanceRun;
  agentStopped: boolean;
  watching: AbortController;
  nextKeys: Promise<Set<string>>;
}

function newCluster(): HcpCluster {
  const c = sampleCluster();
  c.metadata = { name: "rot", namespace: customer };
  c.spec.dns.baseDomainPrefix = `rot${process.pid % 100000}`;
  c.spec.platform.azure.managedResourceGroup = `rotation-${process.pid}-managed`;
  c.spec.platform.azure.tenantId = randomUUID();
  delete c.spec.placement;
  return c;
}

/** Ready, and the management cluster's Secret reports the key the service holds active. */
async function readyWithKeyApplied(): Promise<boolean> {
  const now = await getCluster("rot");
  const keys = now.status?.serviceAccountSigningKey;
  return conditionOf(now, "Ready")?.status === "True" && keys?.appliedKeyId === keys?.activeKeyId;
}

async function startedEvents(run: MaintenanceRun | undefined): Promise<number[]> {
  const events = await service.list<KubeObject & { reason?: string; count?: number }>(eventType, {
    namespace: customer,
    fieldSelector: `involvedObject.uid=${run?.metadata.uid ?? ""}`,
  });
  return events.items.filter((e) => e.reason === "Started").map((e) => e.count ?? 1);
}

/** The kid the management cluster's signing-key Secret is annotated with, and the kid of the key it holds. */
async function hostedSecretKids(r: Rotation): Promise<{ annotated?: string; holds: string }> {
  const hosted = await clientFor(r.mgmt).get<SecretObject>(
    SecretResource,
    "sa-signing-key",
    r.hostedNamespace,
  );
  const key = Buffer.from(hosted.data?.["key"] ?? "", "base64").toString();
  return { annotated: hosted.metadata.annotations?.[SIGNING_KEY_ID_ANNOTATION], holds: keyId(key) };
}

describe("RotateServiceAccountSigningKey as a MaintenanceTask", () => {
  const r = { agentStopped: false, watching: new AbortController() } as Rotation;

  afterAll(async () => {
    r.watching.abort();
    if (r.agentStopped) running.stack.startAgent(r.mgmt);
    if (r.taskName)
      await service.delete(MaintenanceTaskResource, { name: r.taskName }).catch(() => undefined);
  });

  it("reports which key the management cluster's Secret carries", async () => {
    await service.create(HcpClusterResource, newCluster());
    await eventually("the cluster Ready with its key applied", readyWithKeyApplied, READY_MS);
    const ready = await getCluster("rot");
    r.uid = ready.metadata.uid ?? "";
    r.issuer = ready.status?.issuerURL ?? "";
    r.mgmt = ready.status?.managementCluster ?? "";
    r.hostedNamespace = ready.status?.hostedClusterNamespace ?? "";
    const oldKey = (await keyring(r.uid)).active;
    r.oldKid = keyId(oldKey);
    expect(ready.status?.serviceAccountSigningKey).toEqual({
      activeKeyId: r.oldKid,
      publishedKeyIds: [r.oldKid],
      appliedKeyId: r.oldKid,
    });
    r.oldToken = signToken(oldKey, r.issuer);
    expect(await verify(r.oldToken, r.issuer)).toBe("valid");
  });

  it("publishes the next key beside the old one and switches; the old token verifies, a new one carries the new kid", async () => {
    r.nextKeys = watchNextKeys(r.uid, running.stack.namespace, r.watching.signal);
    // Without its agent the management cluster does not get the new key: SwitchSigningKey waits.
    await running.stack.stopAgent(r.mgmt);
    r.agentStopped = true;
    r.taskName = `rotate-${process.pid}`;
    await service.create<MaintenanceTask>(MaintenanceTaskResource, {
      apiVersion: "hcp.aro.dev/v1alpha1",
      kind: "MaintenanceTask",
      metadata: { name: r.taskName },
      spec: { task: "RotateServiceAccountSigningKey", clusters: { names: [`${customer}/rot`] } },
    });
    const waitingForHosted = async () =>
      (stepOf(await theRun(r.taskName), "SwitchSigningKey")?.message ?? "").startsWith(
        "Waiting for the HostedCluster to run signing key",
      );
    await eventually("SwitchSigningKey waiting for the management cluster", waitingForHosted, READY_MS);
    const switched = await keyring(r.uid);
    r.newKid = keyId(switched.active);
    expect(r.newKid).not.toBe(r.oldKid);
    expect(switched.next).toBeUndefined();
    expect((await publishedKeys(r.issuer)).map((k) => k.kid).sort()).toEqual([r.oldKid, r.newKid].sort());
    expect(await verify(r.oldToken, r.issuer)).toBe("valid");
    const newToken = signToken(switched.active, r.issuer);
    expect(kidOf(newToken)).toBe(r.newKid);
    expect(await verify(newToken, r.issuer)).toBe("valid");
    r.waiting = await theRun(r.taskName);
  });

  it("finishes the same run with a new maintenance controller after the first stops mid-step", async () => {
    await running.stack.stopMaintenance();
    running.stack.startMaintenance();
    running.stack.startAgent(r.mgmt);
    r.agentStopped = false;
    const applied = async () =>
      (await getCluster("rot")).status?.serviceAccountSigningKey?.appliedKeyId === r.newKid;
    await eventually("the management cluster's Secret carrying the new key", applied, READY_MS);
    const switched = async () => stepOf(await theRun(r.taskName), "SwitchSigningKey")?.state === "Succeeded";
    await eventually("SwitchSigningKey done", switched, READY_MS);
    // The old key stays published while the old token is unexpired.
    expect(await verify(r.oldToken, r.issuer)).toBe("valid");
  });

  it("ends the run after the switch: one run, one Started, the steps in order", async () => {
    const succeeded = async () => (await theRun(r.taskName))?.status?.phase === "Succeeded";
    await eventually("the run Succeeded", succeeded, READY_MS);
    const runs = await runsOf(r.taskName);
    expect(runs).toHaveLength(1);
    const [run] = runs;
    if (!run) throw new Error("no run");
    const steps = run.status?.steps ?? [];
    expect([run.metadata.uid, run.status?.startedAt]).toEqual([
      r.waiting?.metadata.uid,
      r.waiting?.status?.startedAt,
    ]);
    expect(steps.map((s) => [s.name, s.state])).toEqual([
      ["BeginRotation", "Succeeded"],
      ["PublishBothKeys", "Succeeded"],
      ["SwitchSigningKey", "Succeeded"],
      ["ScheduleKeyRetirement", "Succeeded"],
    ]);
    expect(await startedEvents(run)).toEqual([1]);
    // The run does not hold its cluster until then: the cluster controller drops the old key alone.
    expect(steps.at(-1)?.message).toMatch(/stays in the JWKS until/);
  });

  it("drops the old key from the JWKS once its tokens have expired: old tokens refused, one next key made", async () => {
    const newKeyAlone = async () =>
      JSON.stringify((await getCluster("rot")).status?.serviceAccountSigningKey?.publishedKeyIds) ===
      JSON.stringify([r.newKid]);
    await eventually(
      "the JWKS holding the new key alone",
      newKeyAlone,
      TOKEN_LIFETIME_MS + ROLLOUT_MS + READY_MS,
    );
    expect((await publishedKeys(r.issuer)).map((k) => k.kid)).toEqual([r.newKid]);
    expect(await verify(r.oldToken, r.issuer)).toBe("unknown key");
    const after = signToken((await keyring(r.uid)).active, r.issuer);
    expect(kidOf(after)).toBe(r.newKid);
    expect(await verify(after, r.issuer)).toBe("valid");

    // The management cluster's Secret holds the new key under the same name, annotated with its kid.
    expect(await hostedSecretKids(r)).toEqual({ annotated: r.newKid, holds: r.newKid });
    // One next key was made through the stop and the new controller, not two.
    r.watching.abort();
    expect([...(await r.nextKeys)]).toEqual([r.newKid]);
  });
});
