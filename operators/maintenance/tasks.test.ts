import { describe, expect, it } from "vitest";
import type { HcpCluster, MaintenanceRun } from "../api/v1alpha1/index.ts";
import type { StepContext, StepOutcome } from "./step.ts";
import {
  hostedSigningKeyFromStatus,
  rotateServiceAccountSigningKey,
  type SigningKeyRotation,
  type SigningKeyRotationState,
} from "./tasks.ts";

/** A keyring as the rotation's operations change it, with the JWKS and the HostedCluster lagging as told. */
class FakeRotation implements SigningKeyRotation {
  state: SigningKeyRotationState = { stage: "none", activeKid: "k1", nextPublished: false, retired: [] };
  calls: string[] = [];
  hostedKid = "k1";

  rotationState(): Promise<SigningKeyRotationState> {
    return Promise.resolve(structuredClone(this.state));
  }
  beginRotation(): Promise<void> {
    this.calls.push("begin");
    if (this.state.stage !== "begun") this.state = { ...this.state, stage: "begun" };
    return Promise.resolve();
  }
  switchSigningKey(): Promise<void> {
    this.calls.push("switch");
    if (this.state.stage === "begun")
      this.state = {
        stage: "switched",
        activeKid: "k2",
        nextPublished: false,
        retired: [{ kid: "k1", verifyUntil: new Date("2027-06-04T00:00:00Z") }],
      };
    return Promise.resolve();
  }
  retireExpired(_c: HcpCluster, now: Date): Promise<void> {
    this.calls.push("retire");
    this.state.retired = this.state.retired.filter((r) => r.verifyUntil > now);
    return Promise.resolve();
  }
}

const ctx = (now: string): StepContext => ({
  run: {} as MaintenanceRun,
  cluster: {} as HcpCluster,
  now: new Date(now),
  signal: new AbortController().signal,
});

describe("RotateServiceAccountSigningKey", () => {
  it("begins, waits for the JWKS, switches, waits for the HostedCluster, ends saying until when the old key stays published, dropping only expired keys", async () => {
    const rotation = new FakeRotation();
    const task = rotateServiceAccountSigningKey(rotation, {
      runsKey: (_c, kid) => kid === rotation.hostedKid,
    });
    const [begin, publish, swap, retire] = task.steps;
    const run = (i: { execute(c: StepContext): Promise<StepOutcome> }, now = "2026-06-04T00:00:00Z") =>
      i.execute(ctx(now));

    expect(task.steps.map((s) => s.name)).toEqual([
      "BeginRotation",
      "PublishBothKeys",
      "SwitchSigningKey",
      "ScheduleKeyRetirement",
    ]);
    expect(await run(begin!)).toMatchObject({ kind: "done" });
    // Run again after a crash: the next key exists, none is made again.
    expect(await run(begin!)).toMatchObject({ kind: "done", message: "A next signing key exists" });
    expect(rotation.calls).toEqual(["begin"]);

    expect(await run(publish!)).toMatchObject({ kind: "waiting" });
    rotation.state.nextPublished = true;
    expect(await run(publish!)).toMatchObject({ kind: "done" });

    expect(await run(swap!)).toMatchObject({ kind: "waiting", message: expect.stringContaining("k2") });
    rotation.hostedKid = "k2";
    expect(await run(swap!)).toMatchObject({ kind: "done" });
    // After the switch a re-run of the publish step does not wait on a next key that is now active.
    expect(await run(publish!)).toMatchObject({ kind: "done" });

    // The run does not wait a year for the old key's tokens: it ends, naming the instant, and the
    // old key stays in the keyring (the cluster controller drops it from the JWKS then).
    const early = await run(retire!, "2026-06-05T00:00:00Z");
    expect(early).toMatchObject({
      kind: "done",
      message: expect.stringContaining("2027-06-04T00:00:00.000Z"),
    });
    expect(rotation.state.retired.map((r) => r.kid)).toEqual(["k1"]);
    // A later rotation's last step tidies keys whose tokens have all expired out of the keyring.
    expect(await run(retire!, "2027-06-04T00:00:00Z")).toMatchObject({
      kind: "done",
      message: "No previous key is published any more",
    });
    expect(rotation.state.retired).toEqual([]);
  });
});

describe("hostedSigningKeyFromStatus", () => {
  const cluster = (appliedKeyId: string | undefined, available: "True" | "False" | undefined): HcpCluster =>
    ({
      status: {
        ...(appliedKeyId ? { serviceAccountSigningKey: { activeKeyId: "k2", appliedKeyId } } : {}),
        conditions: available
          ? [
              {
                type: "HostedClusterAvailable",
                status: available,
                reason: "r",
                message: "m",
                lastTransitionTime: "2026-06-04T00:00:00Z",
              },
            ]
          : [],
      },
    }) as unknown as HcpCluster;

  it.each([
    ["the key applied and the HostedCluster Available", cluster("k2", "True"), true],
    ["another key applied", cluster("k1", "True"), false],
    ["no key reported", cluster(undefined, "True"), false],
    ["the HostedCluster not Available", cluster("k2", "False"), false],
    ["no Available condition", cluster("k2", undefined), false],
  ])("%s: %s", (_what, c, runs) => {
    expect(hostedSigningKeyFromStatus.runsKey(c, "k2")).toBe(runs);
  });
});
