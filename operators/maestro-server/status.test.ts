import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { ManifestWork, ManifestWorkStatus, WorkCondition } from "../api/work/v1.ts";
import { statusHash } from "../cloudevents/codec/statushash.ts";
import { setCondition } from "../runtime/conditions.ts";
import { AGENT_STATUS_ACCEPTED, PUBLISHED, composeStatus, shownReport } from "./status.ts";

const CONSUMER = "mgmt-1";
const AGENT_CLOCK = new Date("2030-01-01T00:00:00Z");

const work = (generation: number, status?: ManifestWorkStatus): ManifestWork => ({
  metadata: { name: "w1", namespace: CONSUMER, uid: "uid-1", generation },
  ...(status && { status }),
});

const condition = (type: string, over: Partial<WorkCondition> = {}): WorkCondition => ({
  type,
  status: "True",
  reason: `${type}Reason`,
  message: `${type} message`,
  lastTransitionTime: "2030-01-01T00:00:00Z",
  ...over,
});

/** What the server writes for an agent's report of `generation`: its status with Published on top. */
function written(generation: number, report: ManifestWorkStatus, before?: ManifestWorkStatus): ManifestWork {
  const w = work(generation, before);
  return { ...w, status: composeStatus(w, report, { outcome: "published", generation, consumer: CONSUMER }) };
}

const conditionType = fc
  .stringMatching(/^[A-Z][A-Za-z]{0,12}$/)
  .filter((t) => t !== PUBLISHED && t !== AGENT_STATUS_ACCEPTED);
const arbCondition = (generation: number) =>
  fc.record({
    type: conditionType,
    status: fc.constantFrom("True" as const, "False" as const, "Unknown" as const),
    reason: fc.stringMatching(/^[A-Za-z]{1,20}$/),
    message: fc.string({ maxLength: 40 }),
    lastTransitionTime: fc.constant("2030-01-01T00:00:00Z"),
    observedGeneration: fc.constant(generation),
  });

/**
 * A report as a status event decodes to (conditions always, resourceStatus only when not empty),
 * its conditions set one by one through setCondition, as the agent sets them.
 */
const arbReport = (generation: number): fc.Arbitrary<ManifestWorkStatus> =>
  fc
    .tuple(
      fc.uniqueArray(arbCondition(generation), { selector: (c) => c.type, maxLength: 4 }),
      fc.array(
        fc.record({
          resourceMeta: fc.record({
            ordinal: fc.nat(5),
            resource: fc.constantFrom("configmaps", "hostedclusters"),
            name: fc.stringMatching(/^[a-z]{1,8}$/),
            namespace: fc.stringMatching(/^[a-z]{1,8}$/),
          }),
          conditions: fc.uniqueArray(arbCondition(generation), { selector: (c) => c.type, maxLength: 2 }),
        }),
        { maxLength: 3 },
      ),
    )
    .map(([conditions, manifests]) => ({
      conditions: [condition("Applied", { observedGeneration: generation }), ...conditions].reduce<
        WorkCondition[]
      >((list, c) => setCondition(list, c, { observedGeneration: generation, now: AGENT_CLOCK }), []),
      ...(manifests.length > 0 ? { resourceStatus: { manifests } } : {}),
    }));

describe("shownReport: the agent's last report as the work shows it", () => {
  test("its hash is the hash of the report the work was written from, whatever the report and the status before it", () => {
    // This server sorts the conditions it writes as setCondition does; so does our agent, so the
    // order survives. An agent that orders them otherwise gets a hash of its own status back that
    // differs, and answers the resync with it.
    const cases = fc
      .integer({ min: 1, max: 5 })
      .chain((generation) =>
        fc.tuple(fc.constant(generation), arbReport(generation), fc.option(arbReport(1), { nil: undefined })),
      );
    fc.assert(
      fc.property(cases, ([generation, report, before]) => {
        expect(shownReport(written(generation, report, before))).toEqual({
          resourceVersion: generation,
          statusHash: statusHash(report),
        });
      }),
      { numRuns: 50 },
    );
  });

  test("none when the work shows no report of its current generation", () => {
    const report = { conditions: [condition("Applied", { observedGeneration: 1 })] };
    const shown = written(1, report);
    const newerGeneration = { ...shown, metadata: { ...shown.metadata, generation: 2 } };
    expect(shownReport(newerGeneration)).toBeUndefined();
    expect(shownReport(work(1))).toBeUndefined();
    // Published but not yet applied by the agent.
    expect(shownReport(written(1, { conditions: [] }))).toBeUndefined();
  });

  test("none when the work shows what it had before a refused report", () => {
    const w = work(1, { conditions: [condition("Applied", { observedGeneration: 1 })] });
    const refused = {
      ...w,
      status: composeStatus(
        w,
        { conditions: [condition("Applied", { observedGeneration: 1 }), condition("Available")] },
        { outcome: "published", generation: 1, consumer: CONSUMER },
        { reason: "AgentStatusTooLarge", message: "too large" },
      ),
    };
    expect(refused.status.conditions?.map((c) => c.type)).toContain(AGENT_STATUS_ACCEPTED);
    expect(shownReport(refused)).toBeUndefined();
  });
});
