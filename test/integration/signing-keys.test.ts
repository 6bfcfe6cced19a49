/**
 * SecretSigningKeys against a real apiserver: a start reads every stored key in one list, so a
 * restart's resync and each new cluster cost no GET per cluster, and a key someone stored after
 * that list is still the one a cluster gets.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SIGNING_KEY_LABEL, SecretSigningKeys } from "../../operators/cluster/oidc.ts";
import { SIGNING_KEY_SECRET_KEY } from "../../operators/cluster/signing-keyring.ts";
import { clientFor, secretType, tempNamespace } from "../support/fixtures.ts";

const client = clientFor("service");
let ns: { name: string; remove(): Promise<void> };

beforeAll(async () => {
  ns = await tempNamespace(client, "keys");
});
afterAll(async () => {
  await ns.remove();
});

const owner = (uid: string) => ({ uid, name: `default/${uid}` });

/** The store as a new process has it, with its reads of single Secrets counted. */
function restarted(): { keys: SecretSigningKeys; reads: () => number } {
  const counted = clientFor("service");
  const find = vi.spyOn(counted, "find");
  return { keys: new SecretSigningKeys(counted, ns.name), reads: () => find.mock.calls.length };
}

describe("SecretSigningKeys", () => {
  it("after a start's one list, knows every stored key and makes new ones without reading first", async () => {
    const before = restarted();
    const a = (await before.keys.ensure(owner("a"))).active;
    const b = (await before.keys.ensure(owner("b"))).active;
    expect(before.reads()).toBe(2); // unprimed: each looked for a stored key first

    const after = restarted();
    expect(await after.keys.prime()).toBe(2);
    expect((await after.keys.ensure(owner("a"))).active).toBe(a);
    expect((await after.keys.ensure(owner("b"))).active).toBe(b);
    const c = (await after.keys.ensure(owner("c"))).active;
    expect(c).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(after.reads()).toBe(0);

    const third = restarted();
    await third.keys.prime();
    expect((await third.keys.ensure(owner("c"))).active).toBe(c);
  });

  it("gives the key another writer stored after its list, not a second one", async () => {
    const primed = restarted();
    await primed.keys.prime();
    const other = (await restarted().keys.ensure(owner("late"))).active;
    expect((await primed.keys.ensure(owner("late"))).active).toBe(other);
  });

  it("reads past a first page of 500", async () => {
    const paged = await tempNamespace(client, "keys-paged");
    const { name } = paged;
    const stored = Array.from({ length: 501 }, (_, i) => `paged-${i}`);
    for (let i = 0; i < stored.length; i += 50)
      await Promise.all(
        stored.slice(i, i + 50).map((uid) =>
          client.create(secretType, {
            metadata: {
              name: `sa-signing-key-${uid}`,
              namespace: name,
              labels: { [SIGNING_KEY_LABEL]: uid },
            },
            data: { [SIGNING_KEY_SECRET_KEY]: Buffer.from(`key of ${uid}`).toString("base64") },
          } as never),
        ),
      );
    const counted = clientFor("service");
    const find = vi.spyOn(counted, "find");
    const keys = new SecretSigningKeys(counted, name);
    expect(await keys.prime()).toBe(501);
    expect((await keys.ensure(owner("paged-500"))).active).toBe("key of paged-500");
    expect(find).not.toHaveBeenCalled();
    await paged.remove();
  });

  it("leaves out a Secret without its key, so its cluster reads it and says what is wrong", async () => {
    await client.create(secretType, {
      metadata: {
        name: "sa-signing-key-broken",
        namespace: ns.name,
        labels: { [SIGNING_KEY_LABEL]: "broken" },
      },
      data: { other: Buffer.from("x").toString("base64") },
    } as never);
    const keys = restarted().keys;
    await keys.prime();
    await expect(keys.ensure(owner("broken"))).rejects.toThrow(`has no ${SIGNING_KEY_SECRET_KEY}`);
  });
});
