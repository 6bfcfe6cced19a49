/**
 * Fuzz target of what maestro-server takes from agents: any sequence of status updates, from the
 * work's own consumer or another, of any version, deleted or not, with sequence IDs behind, ahead
 * of and far ahead of the server's clock. Whatever came before, a Deleted is taken only for a work
 * the server is deleting, and the owner's next real status of a live work is still taken: no
 * status can freeze a work.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { summariseWorkSpec, type ManifestWork } from "../../operators/api/work/v1.ts";
import type { StatusUpdate } from "../../operators/cloudevents/codec/manifestbundle.ts";
import { SnowflakeGenerator } from "../../operators/cloudevents/codec/snowflake.ts";
import { StatusStore } from "../../operators/cloudevents/store/status.ts";
import { UID_INDEX, acceptStatus, uidIndexer } from "../../operators/maestro-server/accept.ts";
import { FakeLister } from "../support/lister.ts";
import { fuzzTarget } from "./fuzz.ts";

const OWNER = "mgmt-1";
const NOW = Date.parse("2030-01-01T00:00:00Z");

interface Forged {
  consumer: string;
  /** Of the work's generation, an older or a newer one. */
  versionOffset: number;
  deleted: boolean;
  /** How far from the server's clock the sequence ID's time is, in ms. */
  clockOffsetMs: number;
  /** The snowflake node that made the ID: the agent's own (1) or another. */
  node: number;
}

interface AcceptInput {
  /** Whether the server is deleting the work (it then publishes its deletion). */
  deleting: boolean;
  updates: Forged[];
}

const forged: fc.Arbitrary<Forged> = fc.record({
  consumer: fc.constantFrom(OWNER, OWNER, "mgmt-2", ""),
  versionOffset: fc.integer({ min: -2, max: 2 }),
  deleted: fc.boolean(),
  clockOffsetMs: fc.oneof(
    fc.integer({ min: -3_600_000, max: 1_000 }),
    fc.constantFrom(10 * 60_000, 3_600_000, 365 * 86_400_000),
  ),
  node: fc.constantFrom(1, 1, 1, 2),
});

const input: fc.Arbitrary<AcceptInput> = fc.record({
  deleting: fc.boolean(),
  updates: fc.array(forged, { maxLength: 12 }),
});

const GENERATION = 3;

function statusOf(f: Forged, sequenceId: string): StatusUpdate {
  return {
    resourceId: "uid-1",
    resourceVersion: GENERATION + f.versionOffset,
    consumer: f.consumer,
    sequenceId,
    status: { conditions: [] },
    deleted: f.deleted,
  };
}

fuzzTarget<AcceptInput>({
  name: "maestro-accept",
  arbitrary: input,
  runs: 3000,
  property({ deleting, updates }) {
    const work: ManifestWork = {
      metadata: {
        name: "w1",
        namespace: OWNER,
        uid: "uid-1",
        generation: GENERATION,
        ...(deleting ? { deletionTimestamp: "2030-01-01T00:00:00Z" } : {}),
      },
    };
    const works = new FakeLister([work].map(summariseWorkSpec), { [UID_INDEX]: uidIndexer });
    const statuses = new StatusStore({ now: () => NOW });
    for (const f of updates) {
      const id = new SnowflakeGenerator(f.node, () => NOW + f.clockOffsetMs).next();
      const decision = acceptStatus(statusOf(f, id), works, statuses);
      if (decision.verdict === "accepted" && f.deleted)
        expect(deleting, "a Deleted taken for a live work").toBe(true);
    }
    if (deleting) return;
    // The owner's next real status, made a moment after everything before it: it is taken.
    const next = new SnowflakeGenerator(1, () => NOW + 2_000).next();
    const real = { consumer: OWNER, versionOffset: 0, deleted: false, clockOffsetMs: 2_000, node: 1 };
    expect(acceptStatus(statusOf(real, next), works, statuses).verdict, "the next real status").toBe(
      "accepted",
    );
  },
});
