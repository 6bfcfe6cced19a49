/** Operation IDs: they name the CR they act on and look like UUIDs. */
import { describe, expect, it } from "vitest";
import { newOperationId, operationKey } from "./document.ts";

describe("operation IDs", () => {
  it("makes operation IDs that name their CR and look like UUIDs", () => {
    const id = newOperationId("nodePool", "workers-1a2b3c4d");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.slice(0, 8)).toBe(operationKey("nodePool", "workers-1a2b3c4d"));
    expect(id[7]).toBe("1");
    expect(operationKey("cluster", "workers-1a2b3c4d")[7]).toBe("0");
    expect(newOperationId("nodePool", "workers-1a2b3c4d")).not.toBe(id);
  });
});
