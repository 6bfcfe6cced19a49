/**
 * vCPUs per Azure VM size, for node pools' vCPU-hours. The sizes are those the repo's samples,
 * the ARM examples and the ARM emulator's compute catalog offer (hack/harness/arm-emulator/
 * compute.ts); Azure's published vCPU counts. A size not listed is refused, never guessed: a
 * wrong count would bill every hour of every pool of that size wrongly.
 */
import { LedgerInputError } from "./db.ts";

const FAMILIES: ReadonlyArray<{ pattern: (n: number) => string; sizes: number[] }> = [
  { pattern: (n) => `Standard_D${n}s_v3`, sizes: [2, 4, 8, 16, 32] },
  { pattern: (n) => `Standard_D${n}s_v5`, sizes: [2, 4, 8, 16, 32] },
  { pattern: (n) => `Standard_D${n}ds_v5`, sizes: [4, 8, 16] },
  { pattern: (n) => `Standard_E${n}s_v3`, sizes: [4, 8, 16] },
  { pattern: (n) => `Standard_E${n}ds_v5`, sizes: [4, 8, 16] },
];

/** Size name (Azure's spelling) → vCPUs; in these families the number in the name is the count. */
export const VM_SIZE_VCPUS: ReadonlyMap<string, number> = new Map(
  FAMILIES.flatMap((f) => f.sizes.map((n) => [f.pattern(n), n] as const)),
);

/** The vCPUs of `vmSize`; Azure compares size names case-insensitively, and so do we. */
export function vcpusOf(vmSize: string): number {
  const wanted = vmSize.toLowerCase();
  for (const [name, vcpus] of VM_SIZE_VCPUS) if (name.toLowerCase() === wanted) return vcpus;
  throw new LedgerInputError(
    `VM size "${vmSize}" has no known vCPU count (operators/metering/vm-sizes.ts knows ${[...VM_SIZE_VCPUS.keys()].join(", ")})`,
  );
}

/** A node pool's vCPU rate: nodes × vCPUs of its size (0 nodes: nothing to meter). */
export function nodePoolRate(vmSize: string, nodes: number): number {
  if (!Number.isInteger(nodes) || nodes < 0)
    throw new LedgerInputError(`node count must be a whole number ≥ 0, got ${String(nodes)}`);
  return nodes * vcpusOf(vmSize);
}
