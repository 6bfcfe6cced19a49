/**
 * The kubeconfig of a break-glass credential, as the controller stores it (with the key it made)
 * and the frontend answers it (with only the client's certificate when the client kept its key).
 */
const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");

/**
 * A kubeconfig for the hosted cluster's API server with the client certificate (and the key, when
 * the service made it), and the CA the server's certificate chains to, as HyperShift's own admin
 * kubeconfig carries it. Without a CA (a credential issued before the service carried it back)
 * the client verifies the server against its own trust.
 */
export function kubeconfig(opts: {
  cluster: string;
  server: string;
  user: string;
  certificate: string;
  key?: string;
  /** PEM: the hosted kube-apiserver's serving CA. */
  certificateAuthority?: string;
}): string {
  const ca = opts.certificateAuthority;
  const doc = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: opts.cluster,
        cluster: { server: opts.server, ...(ca ? { "certificate-authority-data": b64(ca) } : {}) },
      },
    ],
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
