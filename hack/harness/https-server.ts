/**
 * An https server on 127.0.0.1 with a CA of its own, as the emulators that stand in for Azure
 * serve: clients trust `caPath`, as the product trusts an extra CA for ARM or storage.
 */
import { mkdir, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import { createCA, issueCert } from "./certs.ts";

export interface HttpsListener {
  server: Server;
  /** `https://127.0.0.1:<port>` */
  endpoint: string;
  /** The PEM of the CA that issued the serving certificate. */
  caPath: string;
}

/** Makes `<workDir>/<name>/` with the CA and serving certificate, and listens on `port` (0: any free one). */
export async function listenHttps(workDir: string, name: string, port = 0): Promise<HttpsListener> {
  const dir = join(workDir, name);
  await mkdir(dir, { recursive: true });
  const ca = await createCA(dir, name);
  const serving = await issueCert(ca, dir, {
    name: `${name}-serving`,
    commonName: name,
    dnsNames: ["localhost"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
  });
  const [cert, key] = await Promise.all([readFile(serving.certPath), readFile(serving.keyPath)]);
  const server = createServer({ cert, key });
  const bound = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
  return { server, endpoint: `https://127.0.0.1:${bound}`, caPath: ca.certPath };
}
