/**
 * `hcpctl session token`: a kubectl exec credential plugin (client.authentication.k8s.io/v1) that
 * prints the signed-in person's OpenID Connect ID token, which the session gate checks against the
 * session's owner. Sign-in is the device authorization grant (a URL and a code on stderr; the
 * person signs in with a browser anywhere), or, for automation, the password grant with
 * HCPCTL_OIDC_USERNAME and HCPCTL_OIDC_PASSWORD from the environment (never a flag: flags show in
 * `ps`). The token is cached per issuer and client until a minute before it expires, in a file
 * only the user can read. The issuer's CA, when private, comes from NODE_EXTRA_CA_CERTS (the
 * kubeconfig `hcpctl session kubeconfig` writes sets it).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import * as oidc from "openid-client";
import { CliError } from "../errors.ts";
import type { Io } from "../io.ts";

export interface SessionTokenFlags {
  issuer: string;
  clientId: string;
  /** Scopes beyond openid (default email, groups, offline access is not asked). */
  scope?: string;
}

interface Cached {
  idToken: string;
  /** Seconds since the epoch. */
  exp: number;
}

const EARLY_S = 60;

function cachePath(env: NodeJS.ProcessEnv, issuer: string, clientId: string): string {
  const base = env["XDG_CACHE_HOME"] || join(homedir(), ".cache");
  const key = createHash("sha256").update(`${issuer}\n${clientId}`).digest("hex").slice(0, 32);
  return join(base, "hcpctl", "oidc", `${key}.json`);
}

async function readCache(path: string, nowS: number): Promise<Cached | undefined> {
  try {
    const c = JSON.parse(await readFile(path, "utf8")) as Partial<Cached>;
    if (typeof c.idToken === "string" && typeof c.exp === "number" && c.exp - EARLY_S > nowS)
      return { idToken: c.idToken, exp: c.exp };
  } catch {
    // No cache, or an unreadable one: sign in again.
  }
  return undefined;
}

async function writeCache(path: string, c: Cached): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(c), { mode: 0o600 });
  await rename(tmp, path);
}

async function signIn(io: Io, flags: SessionTokenFlags, env: NodeJS.ProcessEnv): Promise<Cached> {
  let issuer: URL;
  try {
    issuer = new URL(flags.issuer);
  } catch {
    throw new CliError(`--issuer must be the OpenID issuer's URL, got "${flags.issuer}"`);
  }
  const config = await oidc
    .discovery(issuer, flags.clientId, undefined, oidc.None())
    .catch((err: unknown) => {
      throw new CliError(
        `cannot read the OpenID configuration of ${issuer.href} (--issuer): ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  const scope = `openid ${flags.scope ?? "email groups profile"}`;
  const username = env["HCPCTL_OIDC_USERNAME"];
  const password = env["HCPCTL_OIDC_PASSWORD"];
  let tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  try {
    if (username && password) {
      tokens = await oidc.genericGrantRequest(config, "password", { username, password, scope });
    } else {
      const device = await oidc.initiateDeviceAuthorization(config, { scope });
      io.stderr.write(
        `To sign in, open ${device.verification_uri_complete ?? device.verification_uri} and enter the code ${device.user_code}\n`,
      );
      tokens = await oidc.pollDeviceAuthorizationGrant(config, device);
    }
  } catch (err) {
    throw new CliError(
      `sign-in with ${issuer.href} failed: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const claims = tokens.claims();
  if (!tokens.id_token || !claims) throw new CliError(`${issuer.href} gave no ID token`);
  return { idToken: tokens.id_token, exp: claims.exp };
}

export async function runSessionToken(
  io: Io,
  args: { flags: SessionTokenFlags; env?: NodeJS.ProcessEnv },
): Promise<void> {
  const env = args.env ?? process.env;
  const path = cachePath(env, args.flags.issuer, args.flags.clientId);
  const nowS = Math.floor(io.now() / 1000);
  let token = await readCache(path, nowS);
  if (!token) {
    token = await signIn(io, args.flags, env);
    await writeCache(path, token);
  }
  io.stdout.write(
    `${JSON.stringify({
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: token.idToken, expirationTimestamp: new Date(token.exp * 1000).toISOString() },
    })}\n`,
  );
}
