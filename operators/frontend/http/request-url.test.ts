import { describe, expect, it } from "vitest";
import type { CloudError } from "../errors.ts";
import { baseOf, urlOf } from "./request-url.ts";

describe("request URL", () => {
  it("parses the path and query", () => {
    const url = urlOf({ url: "/subscriptions/s?api-version=2.0", headers: {} });
    expect(url.pathname).toBe("/subscriptions/s");
    expect(url.searchParams.get("api-version")).toBe("2.0");
  });

  it("answers a URL Node cannot parse with a 400", () => {
    let err: unknown;
    try {
      urlOf({ url: "//[bad", headers: {} });
    } catch (e) {
      err = e;
    }
    expect((err as CloudError).status).toBe(400);
  });

  it("builds links on ARM's Referer, else on the request's own scheme and host", () => {
    expect(
      baseOf({ url: "/", headers: { referer: "https://management.azure.com/subscriptions/x?y=1" } }),
    ).toBe("https://management.azure.com");
    expect(baseOf({ url: "/", headers: { host: "rp.example:8443", "x-forwarded-proto": "http" } })).toBe(
      "http://rp.example:8443",
    );
    expect(baseOf({ url: "/", headers: { referer: "not a url" } })).toBe("https://localhost");
  });
});
