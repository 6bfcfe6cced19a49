/**
 * The Rollout CRD against the service cluster's real kube-apiserver: defaults, and each refusal
 * (both or neither of release and task, UpgradeControlPlane as a task, a bad version, an empty
 * selector, maxSize below the canary, a name too long to label the wave tasks, a changed
 * immutable field, abort undone, proceedPastWave lowered) naming the field.
 */
import { afterAll, describe, expect, it } from "vitest";
import { RolloutResource, type Rollout, type RolloutSpec } from "../../operators/api/v1alpha1/index.ts";
import { KubeApiError } from "../../operators/runtime/kube.ts";
import { clientFor } from "../support/fixtures.ts";

const client = clientFor("service");
const suffix = `${process.pid}-${Date.now().toString(36)}`;
const made: string[] = [];
let counter = 0;

afterAll(async () => {
  for (const name of made) await client.delete(RolloutResource, { name });
});

function rollout(
  spec: Partial<RolloutSpec> & Record<string, unknown>,
  name = `ro-${suffix}-${counter++}`,
): Rollout {
  made.push(name);
  return {
    apiVersion: "hcp.aro.dev/v1alpha1",
    kind: "Rollout",
    metadata: { name },
    spec: {
      release: { version: "4.19.10" },
      clusters: { selector: { matchLabels: { fleet: "prod" } } },
      ...spec,
    },
  };
}

async function refused(attempt: Promise<unknown>): Promise<string> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "the apiserver accepted it").toBeInstanceOf(KubeApiError);
  expect((err as KubeApiError).code).toBe(422);
  return (err as KubeApiError).message;
}

const create = (r: Rollout): Promise<Rollout> => client.create(RolloutResource, r);
const patch = (name: string, spec: Record<string, unknown>): Promise<Rollout> =>
  client.mergePatch(RolloutResource, { name }, { spec });

describe("Rollout validation", () => {
  it("takes a release rollout and defaults its waves, budget, urgency and concurrency", async () => {
    const created = await create(rollout({}));
    expect(created.spec).toMatchObject({
      waves: { canary: 1, growth: 2 },
      failureBudget: { maxFailedPerWave: 0 },
      urgency: "Normal",
      maxConcurrentPerManagementCluster: 1,
    });
    const task = await create(rollout({ release: undefined, task: "RotateServiceAccountSigningKey" }));
    expect(task.spec.task).toBe("RotateServiceAccountSigningKey");
  });

  it("refuses both or neither of release and task, and UpgradeControlPlane as a task", async () => {
    expect(await refused(create(rollout({ task: "RotateServiceAccountSigningKey" })))).toContain(
      "spec must set exactly one of release and task",
    );
    expect(await refused(create(rollout({ release: undefined })))).toContain(
      "spec must set exactly one of release and task",
    );
    const message = await refused(create(rollout({ release: undefined, task: "UpgradeControlPlane" })));
    expect(message).toContain("spec.task");
    expect(message).toContain("spec.release");
    expect(await refused(create(rollout({ release: undefined, task: "Reticulate" as never })))).toContain(
      "spec.task",
    );
  });

  it("refuses a version that is not major.minor.patch, naming spec.release.version", async () => {
    expect(await refused(create(rollout({ release: { version: "4.19" } })))).toContain(
      'spec.release.version must be a major.minor.patch release such as 4.19.10, not "4.19"',
    );
  });

  it("refuses clusters named both ways, neither, or by an empty selector", async () => {
    expect(
      await refused(
        create(rollout({ clusters: { selector: { matchLabels: { a: "b" } }, names: ["ns/a"] } })),
      ),
    ).toContain("spec.clusters must set exactly one of selector and names");
    expect(await refused(create(rollout({ clusters: { selector: {} } })))).toContain(
      "spec.clusters.selector must have matchLabels or matchExpressions",
    );
    expect(await refused(create(rollout({ clusters: { names: ["no-namespace"] } })))).toContain(
      "spec.clusters.names",
    );
  });

  it("refuses waves out of bounds and maxSize below the canary", async () => {
    expect(await refused(create(rollout({ waves: { canary: 5, maxSize: 2 } })))).toContain(
      "spec.waves.maxSize must be at least spec.waves.canary",
    );
    expect(await refused(create(rollout({ waves: { canary: 0 } })))).toContain("spec.waves.canary");
    expect(await refused(create(rollout({ waves: { growth: 11 } })))).toContain("spec.waves.growth");
    expect(await refused(create(rollout({ failureBudget: { maxFailedPerWave: -1 } })))).toContain(
      "spec.failureBudget.maxFailedPerWave",
    );
  });

  it("refuses a name longer than 63 characters, naming metadata.name", async () => {
    expect(await refused(create(rollout({}, `ro-${"x".repeat(61)}`)))).toContain(
      "metadata.name must be at most 63 characters",
    );
  });

  it("refuses a changed immutable field, abort undone and proceedPastWave lowered; takes pause, resume and proceed", async () => {
    const name = (await create(rollout({}))).metadata.name ?? "";
    expect(await refused(patch(name, { release: { version: "4.19.11" } }))).toContain(
      "spec.release is immutable",
    );
    expect(
      await refused(patch(name, { clusters: { selector: { matchLabels: { fleet: "dev" } } } })),
    ).toContain("spec.clusters is immutable");
    expect(await refused(patch(name, { waves: { canary: 2 } }))).toContain("spec.waves is immutable");
    expect(await refused(patch(name, { failureBudget: { maxFailedPerWave: 3 } }))).toContain(
      "spec.failureBudget is immutable",
    );
    expect((await patch(name, { paused: true })).spec.paused).toBe(true);
    expect((await patch(name, { paused: false, proceedPastWave: 2 })).spec.proceedPastWave).toBe(2);
    expect(await refused(patch(name, { proceedPastWave: 1 }))).toContain(
      "spec.proceedPastWave cannot decrease",
    );
    expect((await patch(name, { abort: true })).spec.abort).toBe(true);
    expect(await refused(patch(name, { abort: false }))).toContain("spec.abort cannot go back to false");
  });
});
