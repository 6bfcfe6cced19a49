import { describe, expect, it } from "vitest";
import { CloudError } from "../errors.ts";
import { readBody } from "./body-limit.ts";

function request(chunks: string[], headers: Record<string, string> = {}) {
  return {
    headers,
    async *[Symbol.asyncIterator]() {
      for (const c of chunks) yield Buffer.from(c);
      await Promise.resolve();
    },
  };
}

describe("body limit", () => {
  it("reads a body within the limit", async () => {
    expect((await readBody(request(["ab", "cd"]), 4)).toString()).toBe("abcd");
  });

  it("refuses a declared length past the limit before reading, naming it", async () => {
    const err = await readBody(request([], { "content-length": "2097152" }), 1024 * 1024).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CloudError);
    expect((err as CloudError).status).toBe(413);
    expect((err as CloudError).body.message).toContain("more than the limit of 1048576 bytes (1 MiB)");
  });

  it("refuses a body that passes the limit as it arrives, counting all of it", async () => {
    const err = await readBody(request(["abc", "def"]), 4).catch((e: unknown) => e);
    expect((err as CloudError).status).toBe(413);
    expect((err as CloudError).body.message).toContain("the request body is 6 bytes");
  });
});
