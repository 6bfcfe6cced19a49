/** Writes a kubeconfig with embedded credentials: one cluster, one user, one context. */
import { writeFile } from "node:fs/promises";
import { readBase64, type CertFiles } from "./certs.ts";

export interface KubeconfigInput {
  path: string;
  name: string;
  server: string;
  caPath: string;
  client: CertFiles;
}

export async function writeKubeconfig(input: KubeconfigInput): Promise<void> {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: input.name,
        cluster: { server: input.server, "certificate-authority-data": await readBase64(input.caPath) },
      },
    ],
    users: [
      {
        name: `${input.name}-admin`,
        user: {
          "client-certificate-data": await readBase64(input.client.certPath),
          "client-key-data": await readBase64(input.client.keyPath),
        },
      },
    ],
    contexts: [{ name: input.name, context: { cluster: input.name, user: `${input.name}-admin` } }],
    "current-context": input.name,
  };
  // JSON is valid YAML, and kubectl and client-node read it as a kubeconfig.
  await writeFile(input.path, JSON.stringify(config, null, 2), { mode: 0o600 });
}
