import { describe, expect, it } from "vitest";
import { CloudError } from "../errors.ts";
import { checkClientCertificate } from "./authentication.ts";

describe("authentication", () => {
  it("passes a connection whose client certificate the CA signed", () => {
    expect(() => checkClientCertificate({ authorized: true })).not.toThrow();
  });

  it("answers anything else with a 401 CloudError", () => {
    let err: unknown;
    try {
      checkClientCertificate({ authorized: false });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CloudError);
    expect((err as CloudError).status).toBe(401);
    expect((err as CloudError).body.code).toBe("Unauthorized");
  });
});
