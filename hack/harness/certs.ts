/**
 * Certificates for the local region, made with the openssl CLI (ECDSA P-256, fast to generate).
 * One CA per purpose; leaf certificates carry the SANs and extended key usages that kube-apiserver,
 * mosquitto and the ARM emulator expect.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);

export interface CertFiles {
  certPath: string;
  keyPath: string;
}

export interface CertificateAuthority extends CertFiles {
  name: string;
}

export interface LeafOptions {
  /** File name stem in the CA's directory. */
  name: string;
  commonName: string;
  /** Organizations, e.g. ["system:masters"] for an admin client certificate. */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: "server" | "client" | "both";
}

const days = "3650";
const curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

function subject(commonName: string, organizations: string[] = []): string {
  return organizations.map((o) => `/O=${o}`).join("") + `/CN=${commonName}`;
}

/** One self-contained `openssl req -x509` call: new key, certificate signed by `signer` or self-signed. */
async function requestCertificate(files: CertFiles, subj: string, extra: string[]): Promise<void> {
  const { certPath, keyPath } = files;
  await exec("openssl", [
    "req",
    "-x509",
    ...curve,
    "-keyout",
    keyPath,
    "-out",
    certPath,
    "-days",
    days,
    "-subj",
    subj,
    ...extra,
  ]);
}

export async function createCA(dir: string, name: string): Promise<CertificateAuthority> {
  const files = { certPath: join(dir, `${name}-ca.crt`), keyPath: join(dir, `${name}-ca.key`) };
  await requestCertificate(files, subject(`${name}-ca`), [
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
  ]);
  return { name, ...files };
}

export async function issueCert(
  ca: CertificateAuthority,
  dir: string,
  opts: LeafOptions,
): Promise<CertFiles> {
  const files = { certPath: join(dir, `${opts.name}.crt`), keyPath: join(dir, `${opts.name}.key`) };
  const eku = { server: "serverAuth", client: "clientAuth", both: "serverAuth,clientAuth" }[opts.usage];
  const sans = [
    ...(opts.dnsNames ?? []).map((d) => `DNS:${d}`),
    ...(opts.ipAddresses ?? []).map((i) => `IP:${i}`),
  ];
  const extra = [
    "-CA",
    ca.certPath,
    "-CAkey",
    ca.keyPath,
    "-addext",
    "basicConstraints=critical,CA:FALSE",
    "-addext",
    "keyUsage=critical,digitalSignature,keyEncipherment",
    "-addext",
    `extendedKeyUsage=${eku}`,
  ];
  if (sans.length > 0) extra.push("-addext", `subjectAltName=${sans.join(",")}`);
  await requestCertificate(files, subject(opts.commonName, opts.organizations), extra);
  return files;
}

/** A key pair for signing service-account tokens. */
export async function createSigningKey(
  dir: string,
  name: string,
): Promise<{ keyPath: string; publicKeyPath: string }> {
  const keyPath = join(dir, `${name}.key`);
  const publicKeyPath = join(dir, `${name}.pub`);
  await exec("openssl", [
    "genpkey",
    "-algorithm",
    "EC",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-out",
    keyPath,
  ]);
  await exec("openssl", ["pkey", "-in", keyPath, "-pubout", "-out", publicKeyPath]);
  return { keyPath, publicKeyPath };
}

export async function readBase64(path: string): Promise<string> {
  return (await readFile(path)).toString("base64");
}
