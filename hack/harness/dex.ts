/**
 * A real OpenID Connect provider for the local region and the tests: Dex (hack/build-dex.sh builds
 * it from the Go module proxy), over TLS from a CA of its own, with in-memory storage.
 *
 * People sign in against Dex's local password database (`enablePasswordDB` with `staticPasswords`;
 * bcrypt hashes made at start from passwords generated at start). Since Dex v2.45 a static
 * password entry carries groups, which Dex puts in the `groups` claim when the `groups` scope is
 * asked for; so the portal maps groups to roles here exactly as it does with Entra ID's group
 * claims in production. That is closer to a real deployment than Dex's mock connectors (one fixed
 * identity) or a role list by email, and needs no LDAP server.
 *
 * Two clients: the portal (confidential, authorisation code flow; the caller gives its redirect
 * URIs) and hcpctl (public: the device flow, and the password grant through `passwordConnector:
 * local`, which the tests use to get a person's ID token without a browser). The portal trusts
 * hcpctl as a peer, so hcpctl may ask for a token whose audience is the portal too
 * (scope `audience:server:client_id:<portal id>`).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import bcrypt from "bcryptjs";
import { createCA, issueCert } from "./certs.ts";
import { freePort, waitFor } from "./ports.ts";
import { startProcess } from "./process.ts";

const exec = promisify(execFile);
const buildScript = fileURLToPath(new URL("../build-dex.sh", import.meta.url));

/** Dex's name for its local password database, the connector the password grant goes to. */
export const LOCAL_CONNECTOR = "local";
export const PORTAL_CLIENT_ID = "hcp-portal";
export const HCPCTL_CLIENT_ID = "hcpctl";
/** The groups the default people are in, and the portal role each gives (`--role group=role`). */
/** SREs request sessions and approve each other's (never their own: the server and admission refuse it). */
export const DEX_GROUP_ROLES = [
  "sre=operator",
  "sre=approver",
  "approvers=approver",
  "viewers=viewer",
] as const;

export interface DexUserSpec {
  username: string;
  groups: string[];
  /** Defaults to `<username>@example.com`. */
  email?: string;
  /** Defaults to the username, capitalised. */
  name?: string;
  /** Defaults to a random one, made at start. */
  password?: string;
}

/** Two SREs, an approver and a viewer (issue 36). */
export const DEFAULT_DEX_USERS: readonly DexUserSpec[] = [
  { username: "alice", groups: ["sre"] },
  { username: "bob", groups: ["sre"] },
  { username: "carol", groups: ["approvers"] },
  { username: "victor", groups: ["viewers"] },
];

export interface DexUser {
  username: string;
  /** What the person signs in with: Dex's password database knows people by email. */
  email: string;
  name: string;
  password: string;
  groups: string[];
}

export interface StartDexOptions {
  /** Region work dir: the pid and log files go here, the rest in `<workDir>/dex/`. */
  workDir: string;
  users?: readonly DexUserSpec[];
  /** Where the portal's authorisation code flow may return to. */
  portalRedirectURIs?: string[];
  /** A `dex` binary; by default hack/build-dex.sh's (built on first use). */
  binary?: string;
  startTimeoutMs?: number;
}

export interface Dex {
  /** https://127.0.0.1:<port>/dex */
  issuer: string;
  port: number;
  /** The CA that signed Dex's serving certificate: the relying parties' CA bundle. */
  caPath: string;
  portal: { clientId: string; clientSecret: string; redirectURIs: string[] };
  hcpctl: { clientId: string };
  users: readonly DexUser[];
  logPath: string;
  stop(): Promise<void>;
}

/** The dex binary, built by hack/build-dex.sh on first use (the script honours DEX_BIN). */
export async function ensureDex(): Promise<string> {
  const { stdout } = await exec("bash", [buildScript], { maxBuffer: 16 << 20, env: process.env });
  const dir = stdout.trim().split("\n").pop();
  if (!dir) throw new Error("hack/build-dex.sh printed no directory");
  return join(dir, "dex");
}

function secret(): string {
  return randomBytes(18).toString("base64url");
}

function resolveUsers(specs: readonly DexUserSpec[]): DexUser[] {
  const seen = new Set<string>();
  return specs.map((spec) => {
    if (!/^[a-z][a-z0-9._-]*$/.test(spec.username))
      throw new Error(
        `dex user "${spec.username}": a username is lower-case letters, digits, ".", "_" or "-"`,
      );
    if (seen.has(spec.username)) throw new Error(`dex user "${spec.username}" is listed twice`);
    seen.add(spec.username);
    return {
      username: spec.username,
      email: spec.email ?? `${spec.username}@example.com`,
      name: spec.name ?? spec.username[0]!.toUpperCase() + spec.username.slice(1),
      password: spec.password ?? secret(),
      groups: [...spec.groups],
    };
  });
}

interface DexConfigInput {
  issuer: string;
  port: number;
  certPath: string;
  keyPath: string;
  portal: Dex["portal"];
  users: readonly DexUser[];
}

/** Dex's configuration (JSON, which its YAML loader reads as it is). */
export async function dexConfig(input: DexConfigInput): Promise<object> {
  const staticPasswords = await Promise.all(
    input.users.map(async (u) => ({
      email: u.email,
      username: u.username,
      name: u.name,
      preferredUsername: u.username,
      userID: u.username,
      groups: u.groups,
      // Base64 of the bcrypt hash, which Dex also accepts: no "$" for its env expansion to touch.
      hash: Buffer.from(await bcrypt.hash(u.password, 10)).toString("base64"),
    })),
  );
  return {
    issuer: input.issuer,
    storage: { type: "memory" },
    web: {
      https: `127.0.0.1:${input.port}`,
      tlsCert: input.certPath,
      tlsKey: input.keyPath,
      tlsMinVersion: "1.2",
    },
    logger: { level: "info", format: "json" },
    oauth2: {
      responseTypes: ["code"],
      // Signing in is the consent, as for a first-party app in Entra ID.
      skipApprovalScreen: true,
      passwordConnector: LOCAL_CONNECTOR,
    },
    staticClients: [
      {
        id: input.portal.clientId,
        secret: input.portal.clientSecret,
        name: "HCP SRE portal",
        redirectURIs: input.portal.redirectURIs,
        trustedPeers: [HCPCTL_CLIENT_ID],
      },
      { id: HCPCTL_CLIENT_ID, name: "hcpctl", public: true, redirectURIs: ["/device/callback"] },
    ],
    enablePasswordDB: true,
    staticPasswords,
  };
}

/** GET over TLS trusting only `caPath`; resolves with the status and the parsed JSON body. */
export async function getJson(url: string, caPath: string): Promise<{ status: number; body: unknown }> {
  const { status, text } = await send(url, caPath, "GET");
  try {
    return { status, body: JSON.parse(text) as unknown };
  } catch {
    throw new Error(`GET ${url}: ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

export async function startDex(opts: StartDexOptions): Promise<Dex> {
  const users = resolveUsers(opts.users ?? DEFAULT_DEX_USERS);
  const binary = opts.binary ?? (await ensureDex());
  const dir = join(opts.workDir, "dex");
  await mkdir(dir, { recursive: true });
  const ca = await createCA(dir, "dex");
  const serving = await issueCert(ca, dir, {
    name: "dex-serving",
    commonName: "dex",
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const port = await freePort();
  const issuer = `https://127.0.0.1:${port}/dex`;
  const portal = {
    clientId: PORTAL_CLIENT_ID,
    clientSecret: secret(),
    redirectURIs: [...(opts.portalRedirectURIs ?? [])],
  };
  const config = await dexConfig({ issuer, port, ...serving, portal, users });
  const configPath = join(dir, "config.yaml");
  await writeFile(configPath, JSON.stringify(config, null, 2), { mode: 0o600 });

  const proc = await startProcess({
    name: "dex",
    command: binary,
    args: ["serve", configPath],
    dir: opts.workDir,
  });
  const discovery = `${issuer}/.well-known/openid-configuration`;
  try {
    await waitFor("dex", async () => (await getJson(discovery, ca.certPath)).status === 200, {
      timeoutMs: opts.startTimeoutMs ?? 20_000,
      intervalMs: 100,
      exited: proc.exited,
    });
  } catch (err) {
    await proc.stop();
    throw new Error(`${(err as Error).message} (log: ${proc.logPath})`, { cause: err });
  }
  return {
    issuer,
    port,
    caPath: ca.certPath,
    portal,
    hcpctl: { clientId: HCPCTL_CLIENT_ID },
    users,
    logPath: proc.logPath,
    stop: () => proc.stop(),
  };
}

/** The person named `username` among Dex's users; a clear error if there is none. */
export function dexUser(dex: Pick<Dex, "users">, username: string): DexUser {
  const user = dex.users.find((u) => u.username === username);
  if (!user)
    throw new Error(`dex has no user "${username}" (it has ${dex.users.map((u) => u.username).join(", ")})`);
  return user;
}

export interface TokenResponse {
  status: number;
  /** The token endpoint's JSON: id_token, access_token… or error, error_description. */
  body: Record<string, unknown>;
}

/**
 * hcpctl's password grant (RFC 6749 §4.3) at Dex's token endpoint: the person's tokens without a
 * browser. Dex's password database signs people in by email address, not username. `alsoFor` adds client IDs that trust hcpctl as a peer (the portal) to the ID token's
 * audience. A refused sign-in is an answer, not an exception: look at `status` and `body.error`.
 */
export async function passwordGrant(
  dex: Pick<Dex, "issuer" | "caPath" | "hcpctl">,
  email: string,
  password: string,
  opts: { alsoFor?: string[] } = {},
): Promise<TokenResponse> {
  const scopes = [
    "openid",
    "email",
    "profile",
    "groups",
    ...(opts.alsoFor ?? []).map((id) => `audience:server:client_id:${id}`),
  ];
  const form = new URLSearchParams({
    grant_type: "password",
    client_id: dex.hcpctl.clientId,
    username: email,
    password,
    scope: scopes.join(" "),
  }).toString();
  const { status, text } = await send(`${dex.issuer}/token`, dex.caPath, "POST", form);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`dex token endpoint: ${status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
  if (typeof body !== "object" || body === null)
    throw new Error(`dex token endpoint: ${status} answered ${text}`);
  return { status, body: body as Record<string, unknown> };
}

function send(
  url: string,
  caPath: string,
  method: string,
  form?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = form ? { "content-type": "application/x-www-form-urlencoded" } : undefined;
    const req = request(url, { method, headers, ca: readFileSync(caPath), timeout: 5_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${method} ${url}: no answer in 5 s`)));
    req.on("error", reject);
    req.end(form);
  });
}
