/** The JSON-lines logger. */
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";

describe("logging", () => {
  it("writes JSON lines to the sink it is given (npm run local: a file), children included", () => {
    const lines: string[] = [];
    const log = createLogger({ component: "hcp-frontend" }, "debug", (line) => lines.push(line));
    log
      .child({ correlationRequestId: "corr" })
      .error("ARM request failed", new Error("boom"), { status: 500 });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith("\n")).toBe(true);
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({
      level: "error",
      component: "hcp-frontend",
      correlationRequestId: "corr",
      status: 500,
      err: "boom",
    });
  });
});
