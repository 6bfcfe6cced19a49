/**
 * Preview features are gated by the subscription's registered features: what a subscription may
 * ask for, and the refusal that names the feature, the field and the value.
 */
import { describe, expect, it } from "vitest";
import { CloudError, type CloudErrorBody } from "../errors.ts";
import {
  checkPreviewFeatures,
  EXPERIMENTAL_RELEASE_FEATURES,
  registeredFeatures,
  SINGLE_REPLICA_TAG,
  wantsSingleReplica,
  type GatedRequest,
} from "./preview-features.ts";
import type { Subscription } from "../handlers/subscriptions.ts";

const subscription = (features: unknown): Subscription => ({
  state: "Registered",
  registrationDate: "2026-11-27T00:00:00Z",
  properties: { tenantId: "t", registeredFeatures: features as never },
});
const enrolled = subscription([{ name: EXPERIMENTAL_RELEASE_FEATURES, state: "Registered" }]);
const plain = subscription([{ name: "Microsoft.Compute/SomethingElse", state: "Registered" }]);

/** The refusal's field errors as target → message, or undefined when admitted. */
function refusal(sub: Subscription, r: GatedRequest): Record<string, string> | undefined {
  try {
    checkPreviewFeatures(sub, r);
    return undefined;
  } catch (err) {
    if (!(err instanceof CloudError)) throw err;
    expect(err.status).toBe(400);
    const details: CloudErrorBody[] = err.body.details ?? [err.body];
    return Object.fromEntries(details.map((d) => [d.target ?? "", d.message]));
  }
}

describe("registered features", () => {
  it("reads the names of the features in state Registered, in any casing", () => {
    const sub = subscription([
      { name: "microsoft.redhatopenshift/EXPERIMENTALreleasefeatures", state: "Registered" },
      { name: "Microsoft.RedHatOpenShift/Pending", state: "Registering" },
      { name: 7, state: "Registered" },
      "not an object",
    ]);
    expect([...registeredFeatures(sub)]).toEqual([EXPERIMENTAL_RELEASE_FEATURES.toLowerCase()]);
    expect(registeredFeatures(subscription("not a list")).size).toBe(0);
    expect(registeredFeatures(undefined).size).toBe(0);
  });
});

describe("gated channel groups", () => {
  it.each(["candidate", "nightly"])("%s needs the feature, named with the field", (group) => {
    const errors = refusal(plain, { kind: "cluster", channelGroup: group, tags: undefined });
    expect(errors?.["properties.version.channelGroup"]).toContain(EXPERIMENTAL_RELEASE_FEATURES);
    expect(errors?.["properties.version.channelGroup"]).toContain(group);
    expect(refusal(enrolled, { kind: "nodePool", channelGroup: group, tags: undefined })).toBeUndefined();
  });

  it("stable, fast and eus need nothing", () => {
    for (const group of ["stable", "fast", "eus", undefined])
      expect(refusal(plain, { kind: "cluster", channelGroup: group, tags: undefined })).toBeUndefined();
  });

  it("a resource already on a gated group keeps it when the feature is gone", () => {
    const stored = { channelGroup: "nightly", tags: undefined };
    expect(
      refusal(plain, { kind: "cluster", channelGroup: "nightly", tags: undefined, stored }),
    ).toBeUndefined();
    const moved = refusal(plain, {
      kind: "cluster",
      channelGroup: "candidate",
      tags: undefined,
      stored,
    });
    expect(moved?.["properties.version.channelGroup"]).toContain("'candidate'");
  });
});

describe("experimental tags", () => {
  const tags = (value: string, key = SINGLE_REPLICA_TAG) => ({ team: "x", [key]: value });

  it("need the feature; the target names the tag as sent", () => {
    const key = SINGLE_REPLICA_TAG.toUpperCase();
    const errors = refusal(plain, { kind: "cluster", channelGroup: "stable", tags: tags("true", key) });
    expect(errors?.[`tags[${key}]`]).toContain(EXPERIMENTAL_RELEASE_FEATURES);
  });

  it("single-replica takes exactly true or false, on a cluster", () => {
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("true") }),
    ).toBeUndefined();
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("false") }),
    ).toBeUndefined();
    for (const bad of ["TRUE", "", " true", "yes"])
      expect(
        refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags(bad) })?.[
          `tags[${SINGLE_REPLICA_TAG}]`
        ],
      ).toContain("must be exactly one of true, false");
    expect(
      refusal(enrolled, { kind: "nodePool", channelGroup: "stable", tags: tags("true") })?.[
        `tags[${SINGLE_REPLICA_TAG}]`
      ],
    ).toContain("clusters only");
  });

  it("an experimental tag the service does not know is refused, not ignored", () => {
    const key = "aro-hcp.experimental.cluster.size-override";
    const errors = refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("true", key) });
    expect(errors?.[`tags[${key}]`]).toContain("not an experimental tag this service knows");
  });

  it("single-replica is read at creation only: adding, changing or removing it later is refused", () => {
    const stored = { channelGroup: "stable", tags: tags("true") };
    const target = `tags[${SINGLE_REPLICA_TAG}]`;
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("true"), stored }),
    ).toBeUndefined();
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("false"), stored })?.[target],
    ).toContain("creation only");
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: { team: "x" }, stored })?.[target],
    ).toContain("creation only");
    const without = { channelGroup: "stable", tags: { team: "x" } };
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("true"), stored: without })?.[
        target
      ],
    ).toContain("creation only");
    // Saying "false" of a cluster that never had it changes nothing.
    expect(
      refusal(enrolled, { kind: "cluster", channelGroup: "stable", tags: tags("false"), stored: without }),
    ).toBeUndefined();
  });

  it("every reason is given at once", () => {
    const body = refusal(plain, {
      kind: "cluster",
      channelGroup: "nightly",
      tags: { [SINGLE_REPLICA_TAG]: "true", "aro-hcp.experimental.cluster.other": "1" },
    });
    expect(Object.keys(body ?? {})).toHaveLength(3);
  });

  it("wantsSingleReplica reads the tag in any casing", () => {
    expect(wantsSingleReplica({ [SINGLE_REPLICA_TAG.toUpperCase()]: "true" })).toBe(true);
    expect(wantsSingleReplica({ [SINGLE_REPLICA_TAG]: "false" })).toBe(false);
    expect(wantsSingleReplica(undefined)).toBe(false);
  });
});
