import { describe, expect, it } from "vitest";
import { Faults, matches, RequestLog, USER_ERRORS, type RequestMatch } from "./faults.ts";

const pip = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/pip1";

describe("matches", () => {
  it.each<[string, RequestMatch, string, boolean]>([
    ["any method, no path", {}, "DELETE", true],
    ["method case-insensitive", { method: "put" }, "PUT", true],
    ["one of several methods", { method: ["GET", "PUT"] }, "PUT", true],
    ["wrong method", { method: "GET" }, "PUT", false],
    ["wildcard method", { method: "*" }, "PATCH", true],
    ["path substring, case-insensitive", { path: "/publicipaddresses/" }, "GET", true],
    ["path substring missing", { path: "/loadBalancers/" }, "GET", false],
    ["regexp", { path: /publicIPAddresses\/pip\d$/ }, "GET", true],
    ["global regexp twice", { path: /pip1/g }, "GET", true],
  ])("%s", (_what, match, method, expected) => {
    expect(matches(match, method, pip)).toBe(expected);
    expect(matches(match, method, pip)).toBe(expected);
  });
});

describe("Faults", () => {
  it("answers a throttle N times with Retry-After, counts hits, then expires", () => {
    const faults = new Faults();
    const handle = faults.throttle({ method: "PUT", path: "pip1" }, { times: 2, retryAfterSeconds: 3 });
    const first = faults.takeReply("PUT", pip);
    expect(first?.status).toBe(429);
    expect(first?.headers).toEqual({ "retry-after": "3" });
    expect(faults.takeReply("GET", pip)).toBeUndefined();
    expect(faults.takeReply("PUT", pip)?.status).toBe(429);
    expect(faults.takeReply("PUT", pip)).toBeUndefined();
    expect(handle.hits).toBe(2);
    expect(handle.remaining).toBe(0);
  });

  it("gives a throttle without Retry-After, or with retry-after-ms", () => {
    const faults = new Faults();
    faults.throttle({ path: "a" });
    faults.throttle({ path: "b" }, { retryAfterMs: 250 });
    expect(faults.takeReply("GET", "/a")?.headers).toEqual({});
    expect(faults.takeReply("GET", "/b")?.headers).toEqual({ "retry-after-ms": "250" });
  });

  it("answers server and user errors with ARM's error body, first registered first", () => {
    const faults = new Faults();
    faults.serverError({ path: "pip" }, { status: 503 });
    faults.error({ path: "pip" }, USER_ERRORS.quotaExceeded);
    expect(faults.takeReply("PUT", pip)).toMatchObject({
      status: 503,
      body: { error: { code: "ServiceUnavailable" } },
    });
    expect(faults.takeReply("PUT", pip)).toMatchObject({
      status: 400,
      body: { error: { code: "QuotaExceeded", message: USER_ERRORS.quotaExceeded.message } },
    });
  });

  it("holds requests until released, then lets new ones through", async () => {
    const faults = new Faults();
    const hold = faults.hangRequest({ method: "GET" });
    const waiting = faults.takeRequestHold("GET", pip);
    expect(waiting).toBeDefined();
    expect(hold.held).toBe(1);
    let released = false;
    void waiting?.then(() => (released = true));
    await Promise.resolve();
    expect(released).toBe(false);
    hold.release();
    await waiting;
    expect(released).toBe(true);
    expect(faults.takeRequestHold("GET", pip)).toBeUndefined();
    expect(hold.hits).toBe(1);
  });

  it("decides operation faults when the operation starts", () => {
    const faults = new Faults();
    const hold = faults.hangOperation({ method: "PUT" }, { times: 1 });
    faults.failOperation({ method: "DELETE" }, { code: "InternalServerError", message: "boom" });
    expect(faults.takeOperationFault("PUT", pip).hold).toBeDefined();
    expect(faults.takeOperationFault("PUT", pip)).toEqual({});
    expect(faults.takeOperationFault("DELETE", pip)).toEqual({
      failure: { code: "InternalServerError", message: "boom" },
    });
    hold.release();
  });

  it("adds latency to every matching request until cleared", () => {
    const faults = new Faults();
    const handle = faults.latency({ method: "GET" }, 50);
    expect(faults.takeLatency("GET", pip)).toBe(50);
    expect(faults.takeLatency("GET", pip)).toBe(50);
    expect(faults.takeLatency("PUT", pip)).toBe(0);
    handle.clear();
    expect(faults.takeLatency("GET", pip)).toBe(0);
  });
});

describe("RequestLog", () => {
  it("lists entries by match, as copies", () => {
    const log = new RequestLog();
    const put = log.start("PUT", pip);
    put.status = 201;
    log.start("GET", pip).status = 200;
    expect(log.list({ method: "PUT" })).toEqual([
      { seq: 1, method: "PUT", path: pip, status: 201, injected: false },
    ]);
    log.list()[0]!.status = 500;
    expect(log.list()[0]?.status).toBe(201);
    log.clear();
    expect(log.list()).toEqual([]);
  });
});
