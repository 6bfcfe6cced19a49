import { describe, expect, it } from "vitest";
import { logRequest } from "./request-log.ts";

function recorder() {
  const lines: { level: string; args: unknown[] }[] = [];
  return {
    lines,
    debug: (...args: unknown[]) => void lines.push({ level: "debug", args }),
    error: (...args: unknown[]) => void lines.push({ level: "error", args }),
  };
}

describe("request log", () => {
  it("logs a request at debug, with its path without the query and its duration", () => {
    const log = recorder();
    logRequest(log, {
      method: "GET",
      route: "r",
      url: "/a/b?secret=1",
      status: 200,
      seconds: 0.0123,
      err: undefined,
    });
    expect(log.lines).toEqual([
      {
        level: "debug",
        args: ["ARM request", { method: "GET", route: "r", status: 200, path: "/a/b", durationMs: 12 }],
      },
    ]);
  });

  it("logs a 5xx as an error with its cause", () => {
    const log = recorder();
    const cause = new Error("apiserver down");
    logRequest(log, { method: "PUT", route: "r", url: "/a", status: 500, seconds: 1, err: cause });
    expect(log.lines[0]?.level).toBe("error");
    expect(log.lines[0]?.args[1]).toBe(cause);
  });
});
