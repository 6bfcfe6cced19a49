import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStorageEmulator, type StorageEmulator } from "../../hack/harness/storage-emulator/index.ts";
import { createBlobStore, STORAGE_SCOPE } from "../../operators/azure/blob.ts";
import { scratchDir } from "../support/fixtures.ts";

/** Hands out numbered tokens that expire `lifetimeMs` after they are given, and counts them. */
class CountingCredential implements TokenCredential {
  readonly scopes: string[] = [];
  lifetimeMs: number;

  constructor(lifetimeMs: number) {
    this.lifetimeMs = lifetimeMs;
  }

  getToken(scopes: string | string[], _options?: GetTokenOptions): Promise<AccessToken> {
    this.scopes.push(...(Array.isArray(scopes) ? scopes : [scopes]));
    return Promise.resolve({
      token: `token-${this.scopes.length}`,
      expiresOnTimestamp: Date.now() + this.lifetimeMs,
    });
  }
}

describe("blob store tokens", () => {
  let emulator: StorageEmulator;
  let removeScratch: () => Promise<void>;
  const seen: Array<string | undefined> = [];

  beforeAll(async () => {
    const scratch = await scratchDir("blob-token");
    removeScratch = () => scratch.remove();
    emulator = await startStorageEmulator({
      workDir: scratch.path,
      verifyBearer: (authorization) => {
        seen.push(authorization);
        return undefined;
      },
    });
  });

  afterAll(async () => {
    await emulator?.stop();
    await removeScratch?.();
  });

  it("asks the credential once while its token is fresh, and again once it nears expiry", async () => {
    const credential = new CountingCredential(60 * 60_000);
    const store = await createBlobStore({
      containerUrl: `${emulator.blobServiceUrl}/$web`,
      credential,
      caFile: emulator.caPath,
    });
    seen.length = 0;
    await store.write("a/openid-configuration", "{}", "application/json");
    expect(await store.read("a/openid-configuration")).toBe("{}");
    expect(await store.remove("a/openid-configuration")).toBe(true);
    expect(credential.scopes).toEqual([STORAGE_SCOPE]);
    expect(seen).toEqual(["Bearer token-1", "Bearer token-1", "Bearer token-1"]);

    // A token within two minutes of its expiry is not used again.
    credential.lifetimeMs = 60_000;
    const nearExpiry = await createBlobStore({
      containerUrl: `${emulator.blobServiceUrl}/$web`,
      credential,
      caFile: emulator.caPath,
    });
    seen.length = 0;
    await nearExpiry.read("b");
    await nearExpiry.read("b");
    expect(credential.scopes).toHaveLength(3);
    expect(seen).toEqual(["Bearer token-2", "Bearer token-3"]);
  });
});
