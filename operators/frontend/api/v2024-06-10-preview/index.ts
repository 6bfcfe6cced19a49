/**
 * 2024-06-10-preview ⇄ the internal model. Its shapes differ in two places: a customer-managed
 * key's vault name sits inside activeKey (the model has it beside activeKey, as later versions
 * do), and an external auth's read-only state is one `condition`, the model's Available one.
 */
import {
  checkedProperties,
  type ClusterProperties,
  type ExternalAuthProperties,
  type NodePoolProperties,
} from "../internal.ts";
import { registered, sameShape, type ApiVersionDefinition, type Conversion } from "../version.ts";
import * as schema from "./schema.ts";

/** A customer-managed key in either shape: its vault beside activeKey, or inside it. */
interface EitherKms {
  vaultName?: string;
  activeKey?: { name?: string; version?: string; vaultName?: string };
}

const kmsIn = (p: { etcd?: { dataEncryption?: { customerManaged?: { kms?: EitherKms } } } }) =>
  p.etcd?.dataEncryption?.customerManaged?.kms;

export const cluster: Conversion<schema.ClusterProperties, ClusterProperties> = {
  toInternal(p) {
    const out = structuredClone(p);
    const kms: EitherKms | undefined = kmsIn(out);
    const vaultName = kms?.activeKey?.vaultName;
    if (kms?.activeKey !== undefined && vaultName !== undefined) {
      kms.vaultName = vaultName;
      delete kms.activeKey.vaultName;
    }
    return checkedProperties(out);
  },
  fromInternal(p) {
    const out = structuredClone(p);
    const kms: EitherKms | undefined = kmsIn(out);
    if (kms?.vaultName !== undefined) {
      kms.activeKey = { ...(kms.activeKey ?? {}), vaultName: kms.vaultName };
      delete kms.vaultName;
    }
    // What is left of the model's shape the version's schema drops when it projects.
    return out as schema.ClusterProperties;
  },
};

/** The read-only state before 2026-06-30-preview: the Available condition alone. */
export const externalAuth: Conversion<schema.ExternalAuthProperties, ExternalAuthProperties> = {
  toInternal: (p) => checkedProperties(p),
  fromInternal(p) {
    const { status, ...rest } = p;
    const available = status?.conditions?.find((c) => c.type === "Available");
    return available ? { ...rest, condition: available } : rest;
  },
};

export const v2024_06_10_preview: ApiVersionDefinition<"2024-06-10-preview", typeof schema.SCHEMAS> = {
  name: "2024-06-10-preview",
  schemas: schema.SCHEMAS,
  conversions: {
    cluster: registered(cluster),
    nodePool: sameShape<NodePoolProperties>(),
    externalAuth: registered(externalAuth),
  },
  acceptsCredentialCsr: false,
};
