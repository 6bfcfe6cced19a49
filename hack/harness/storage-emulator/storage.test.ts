/**
 * The storage emulator as the product's blob client meets it, over https on the emulator's own CA
 * with Entra ID tokens from the ARM emulator: write, read, replace and delete a blob; the static
 * website serves `$web` without a token; a request without a token or with one for ARM is refused
 * with Blob's codes; injected faults reach the client as BlobStoreErrors.
 */
import { ClientSecretCredential } from "@azure/identity";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BlobStoreError, createBlobStore, HttpsBlobStore } from "../../../operators/azure/blob.ts";
import { startArmEmulator, type ArmEmulator } from "../arm-emulator/index.ts";
import { startStorageEmulator, WEB_CONTAINER, type StorageEmulator } from "./index.ts";

let dir: string;
let arm: ArmEmulator;
let storage: StorageEmulator;
let store: HttpsBlobStore;
let ca: string;

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; code?: string }> {
  return new Promise((resolve, reject) => {
    request(url, { ca, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const code = res.headers["x-ms-error-code"];
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          ...(typeof code === "string" ? { code } : {}),
        });
      });
    })
      .on("error", reject)
      .end();
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "storage-emulator-"));
  arm = await startArmEmulator({ workDir: dir });
  storage = await startStorageEmulator({ workDir: dir, verifyBearer: arm.verifyBearer });
  ca = await readFile(storage.caPath, "utf8");
  const credential = new ClientSecretCredential(arm.tenantId, arm.clientId, arm.clientSecret, {
    authorityHost: arm.endpoint,
    disableInstanceDiscovery: true,
    tlsOptions: { ca: await readFile(arm.caPath, "utf8") },
  });
  store = await createBlobStore({
    containerUrl: `${storage.blobServiceUrl}/${WEB_CONTAINER}`,
    credential,
    caFile: storage.caPath,
  });
});

afterAll(async () => {
  await storage?.stop();
  await arm?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("storage emulator and the blob client", () => {
  it("writes, reads, replaces and deletes a blob; the website serves it without a token", async () => {
    expect(await store.read("t/c/openid/v1/jwks")).toBeUndefined();
    await store.write("t/c/openid/v1/jwks", '{"keys":[]}', "application/json");
    expect(await store.read("t/c/openid/v1/jwks")).toBe('{"keys":[]}');
    await store.write("t/c/openid/v1/jwks", '{"keys":[1]}', "application/json");
    expect(await store.read("t/c/openid/v1/jwks")).toBe('{"keys":[1]}');
    expect(await get(`${storage.webEndpoint}t/c/openid/v1/jwks`)).toMatchObject({
      status: 200,
      body: '{"keys":[1]}',
    });
    expect(storage.blobs()).toEqual([
      {
        container: WEB_CONTAINER,
        name: "t/c/openid/v1/jwks",
        body: '{"keys":[1]}',
        contentType: "application/json",
      },
    ]);
    expect(await store.remove("t/c/openid/v1/jwks")).toBe(true);
    expect(await store.remove("t/c/openid/v1/jwks")).toBe(false);
    expect((await get(`${storage.webEndpoint}t/c/openid/v1/jwks`)).status).toBe(404);
  });

  it("refuses a request without a token, or with a token for ARM, with Blob's codes", async () => {
    const url = `${storage.blobServiceUrl}/${WEB_CONTAINER}/x`;
    expect(await get(url, { "x-ms-version": "2021-08-06" })).toMatchObject({
      status: 401,
      code: "NoAuthenticationInformation",
    });
    const credential = new ClientSecretCredential(arm.tenantId, arm.clientId, arm.clientSecret, {
      authorityHost: arm.endpoint,
      disableInstanceDiscovery: true,
      tlsOptions: { ca: await readFile(arm.caPath, "utf8") },
    });
    const armToken = await credential.getToken(`${arm.endpoint}/.default`);
    expect(
      await get(url, { "x-ms-version": "2021-08-06", authorization: `Bearer ${armToken.token}` }),
    ).toMatchObject({ status: 401, code: "InvalidAuthenticationInfo" });
    const anonymous = new HttpsBlobStore({ containerUrl: `${storage.blobServiceUrl}/${WEB_CONTAINER}` });
    await expect(anonymous.read("x")).rejects.toThrow(BlobStoreError);
  });

  it("brings injected faults to the client as BlobStoreErrors: a status, and a dropped connection", async () => {
    const failing = storage.faults.add({
      method: "PUT",
      times: 1,
      fault: { status: 503, code: "ServerBusy" },
    });
    const err = await store.write("f", "{}", "application/json").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlobStoreError);
    expect(err).toMatchObject({ status: 503, code: "ServerBusy" });
    failing.remove();
    await store.write("f", "{}", "application/json");

    storage.faults.add({ method: "GET", times: 1, fault: { drop: true } });
    const dropped = await store.read("f").catch((e: unknown) => e);
    expect(dropped).toMatchObject({ status: 0, code: "ServiceUnreachable" });
    expect(await store.read("f")).toBe("{}");
    expect(storage.requests().filter((r) => r.injected)).toHaveLength(2);
    await store.remove("f");
  });
});
