import { describe, expect, it } from "vitest";
import { Action, eventTypeLabel, formatEventType, MANIFEST_BUNDLE_DATA_TYPE } from "./types.ts";

describe("eventTypeLabel", () => {
  it("names the protocol's own types and counts anything else as other", () => {
    const status = formatEventType({
      dataType: MANIFEST_BUNDLE_DATA_TYPE,
      subResource: "status",
      action: Action.update,
    });
    expect(eventTypeLabel(status)).toBe(status);
    for (const hostile of [
      "",
      "x",
      `${MANIFEST_BUNDLE_DATA_TYPE}.status.${"a".repeat(500)}`,
      `${MANIFEST_BUNDLE_DATA_TYPE}.spec.resync_request.extra`,
      "io.example.other.v1.things.status.update_request",
      `${MANIFEST_BUNDLE_DATA_TYPE}.${"s".repeat(10)}.update_request`,
    ])
      expect(eventTypeLabel(hostile), hostile).toBe("other");
  });
});
