/**
 * The kubeconfig of a break-glass credential, as the controller stores it (with the key it made)
 * and the frontend answers it (with only the client's certificate when the client kept its key).
 */
const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

/**
 * A kubeconfig for the hosted cluster's API server with the client certificate (and the key, when
 * the service made it). The server's CA is not among what the service knows of a cluster, so the
 * client verifies the server against its own trust.
 */
export function kubeconfig(opts: {
  cluster: string;
  server: string;
  user: string;
  certificate: string;
  key?: string;
}): string {
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: opts.cluster, cluster: { server: opts.server } }],
    users: [
      {
        name: opts.user,
        user: {
          "client-certificate-data": b64(opts.certificate),
          ...(opts.key ? { "client-key-data": b64(opts.key) } : {}),
        },
      },
    ],
    contexts: [{ name: opts.cluster, context: { cluster: opts.cluster, user: opts.user } }],
    "current-context": opts.cluster,
  };
  return JSON.stringify(doc, null, 2);
}
