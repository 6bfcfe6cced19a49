/**
 * People on a region's service cluster: a client certificate from the apiserver's own client CA
 * with the person's name (CN) and groups (O), as the region's sign-in would give them, in a
 * kubeconfig of its own. The apiserver authorises them by RBAC like anyone else; nothing is
 * impersonated. The harness's apiserver keeps its CAs in `<workDir>/<cluster>/` (apiserver.ts).
 */
import { access, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { issueCert } from "./certs.ts";
import { writeKubeconfig } from "./kubeconfig.ts";

export interface PersonKubeconfigInput {
  /** The apiserver's directory: client-ca.{crt,key} and serving-ca.crt. */
  apiServerDir: string;
  server: string;
  /** Where the certificate and kubeconfig go. */
  outDir: string;
  /** File stem; unique within outDir. */
  stem: string;
  name: string;
  groups: string[];
}

export async function personKubeconfig(input: PersonKubeconfigInput): Promise<string> {
  const { apiServerDir: dir } = input;
  const ca = { name: "client", certPath: join(dir, "client-ca.crt"), keyPath: join(dir, "client-ca.key") };
  await access(ca.keyPath);
  await mkdir(input.outDir, { recursive: true });
  const client = await issueCert(ca, input.outDir, {
    name: input.stem,
    commonName: input.name,
    organizations: input.groups,
    usage: "client",
  });
  const path = join(input.outDir, `${input.stem}.kubeconfig`);
  await writeKubeconfig({
    path,
    name: "service",
    server: input.server,
    caPath: join(dir, "serving-ca.crt"),
    client,
  });
  return path;
}
