/**
 * The signing-key rotation's steps on the cluster's keyring, and what the cluster reconcile then
 * publishes and gives the HostedCluster at each stage.
 */
import { describe, expect, it } from "vitest";
import type { HostedCluster } from "../api/hypershift/v1beta1/index.ts";
import type { ManifestWork } from "../api/work/v1.ts";
import type { KubeObject } from "../runtime/kube.ts";
import { BlobIssuerDocuments } from "./oidc.ts";
import {
  MAX_TOKEN_LIFETIME_MS,
  NoRotationBegunError,
  SigningKeyNotPublishedError,
  SigningKeyRotation,
  SWITCH_ROLLOUT_ALLOWANCE_MS,
} from "./signing-key-rotation.ts";
import { keyId } from "./signing-keyring.ts";
import { world } from "../../test/support/cluster-world.ts";

const UID = "uid-demo";
const VERIFY_FOR_MS = MAX_TOKEN_LIFETIME_MS + SWITCH_ROLLOUT_ALLOWANCE_MS;

/** A cluster world with the rotation's steps on its key store and blobs, on the world's clock. */
async function rotating() {
  const w = world();
  await w.reconcile();
  const woken: string[] = [];
  const rotation = new SigningKeyRotation({
    keys: w.keys,
    documents: new BlobIssuerDocuments(w.blobs),
    now: () => w.tick(0),
    wake: (c) => woken.push(c.metadata.name ?? ""),
  });
  const cluster = () => w.clusters.get("default", "demo")!;
  const publishedKids = () => {
    const name = [...w.blobs.blobs.keys()].find((k) => k.endsWith("openid/v1/jwks"))!;
    return (JSON.parse(w.blobs.blobs.get(name)!) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);
  };
  /** The private key the HostedCluster's work carries, as the last apply wrote it. */
  const carriedKey = () => {
    const work = w.writer.of("apply", "ManifestWork").at(-1)?.body as ManifestWork;
    const manifests = work.spec?.workload?.manifests ?? [];
    const hc = manifests.find((m) => m.kind === "HostedCluster") as unknown as HostedCluster;
    const name = hc.spec.serviceAccountSigningKey?.name;
    const secret = manifests.find(
      (m) => m.kind === "Secret" && m.metadata?.name === name,
    ) as unknown as KubeObject & { data: Record<string, string> };
    return Buffer.from(secret.data["key"] ?? "", "base64").toString();
  };
  const stored = () => w.keys.rings.get(UID)!;
  return { w, rotation, cluster, publishedKids, carriedKey, stored, woken };
}

describe("SigningKeyRotation", () => {
  it("publishes the next key before it signs, keeps the old one until its tokens expire, then drops it", async () => {
    const { w, rotation, cluster, publishedKids, carriedKey, stored, woken } = await rotating();
    const oldKey = stored().ring.active;
    const oldKid = keyId(oldKey);
    expect(publishedKids()).toEqual([oldKid]);
    expect((await rotation.rotationState(cluster())).stage).toBe("none");

    await rotation.beginRotation(cluster());
    const nextKey = stored().ring.next!;
    const nextKid = keyId(nextKey);
    expect(woken).toEqual(["demo"]);
    expect(await rotation.rotationState(cluster())).toMatchObject({
      stage: "begun",
      nextKid,
      nextPublished: false,
    });
    // Not yet in the JWKS: the switch is refused, nothing changes.
    await expect(rotation.switchSigningKey(cluster())).rejects.toThrow(SigningKeyNotPublishedError);
    expect(stored().ring.active).toBe(oldKey);

    await w.reconcile();
    expect(publishedKids()).toEqual([oldKid, nextKid]);
    expect(carriedKey()).toBe(oldKey); // the next key signs nothing yet
    expect((await rotation.rotationState(cluster())).nextPublished).toBe(true);

    const switchedAt = w.tick(0);
    await rotation.switchSigningKey(cluster());
    expect(stored().ring).toMatchObject({
      active: nextKey,
      retired: [{ kid: oldKid, verifyUntil: new Date(switchedAt + VERIFY_FOR_MS).toISOString() }],
    });
    expect(stored().ring.next).toBeUndefined();
    await w.reconcile();
    expect(publishedKids()).toEqual([nextKid, oldKid]);
    expect(carriedKey()).toBe(nextKey);
    expect(await rotation.rotationState(cluster())).toMatchObject({
      stage: "switched",
      activeKid: nextKid,
      retired: [{ kid: oldKid, verifyUntil: new Date(switchedAt + VERIFY_FOR_MS) }],
      nextRetirementAt: new Date(switchedAt + VERIFY_FOR_MS),
    });

    // Still within its instant: retireExpired keeps it, the JWKS keeps it.
    w.tick(VERIFY_FOR_MS - 1);
    await rotation.retireExpired(cluster(), new Date(w.tick(0)));
    expect(stored().ring.retired).toHaveLength(1);
    await w.reconcile();
    expect(publishedKids()).toEqual([nextKid, oldKid]);

    // Past it: the reconcile publishes without it even before the Secret is cleaned up.
    w.tick(1);
    await w.reconcile();
    expect(publishedKids()).toEqual([nextKid]);
    await rotation.retireExpired(cluster(), new Date(w.tick(0)));
    expect(stored().ring.retired).toEqual([]);
    expect((await rotation.rotationState(cluster())).stage).toBe("none");
  });

  it("asks to be reconciled again when a retired key's instant passes", async () => {
    const { w, rotation, cluster } = await rotating();
    await rotation.beginRotation(cluster());
    await w.reconcile();
    await rotation.switchSigningKey(cluster());
    w.tick(VERIFY_FOR_MS - 5_000);
    const result = await w.reconcile();
    expect(result?.requeueAfterMs).toBeLessThanOrEqual(5_000);
  });

  it("changes nothing twice when a step runs again, as after a crash", async () => {
    const { w, rotation, cluster, stored } = await rotating();
    await rotation.beginRotation(cluster());
    const begun = stored();
    await rotation.beginRotation(cluster());
    expect(stored()).toBe(begun);
    await w.reconcile();

    await rotation.switchSigningKey(cluster());
    const switched = stored();
    w.tick(60_000);
    await rotation.switchSigningKey(cluster());
    expect(stored()).toBe(switched); // the retired key's verify-until did not move

    w.tick(VERIFY_FOR_MS);
    await rotation.retireExpired(cluster(), new Date(w.tick(0)));
    const retired = stored();
    await rotation.retireExpired(cluster(), new Date(w.tick(0)));
    expect(stored()).toBe(retired);
    expect(retired.ring.active).toBe(switched.ring.active);
  });

  it("reads again after a lost race and writes once", async () => {
    const { w, rotation, cluster, stored } = await rotating();
    const before = Number(stored().version);
    w.keys.conflicts = 2;
    await rotation.beginRotation(cluster());
    expect(Number(stored().version)).toBe(before + 1);
    expect(stored().ring.next).toBeDefined();
  });

  it("refuses to switch with no rotation begun, and says so", async () => {
    const { rotation, cluster, stored } = await rotating();
    const before = stored();
    await expect(rotation.switchSigningKey(cluster())).rejects.toThrow(NoRotationBegunError);
    expect(stored()).toBe(before);
  });
});
