import { POLICY_SOURCE_TYPES, policySchema, type Policy } from '../contracts/policy.ts';

/** Defaults, merging and reading of stored policies (the schema is the contract: server/contracts/policy.ts). */

export function defaultPolicy(): Policy {
  return {
    sourceTypes: Object.fromEntries(POLICY_SOURCE_TYPES.map((t) => [t, { enabled: true }])) as Policy['sourceTypes'],
    libraryFilters: {
      mode: 'quality',
      quality: {
        requireVerified: false,
        minTrustScore: null,
        maxAgeDays: 0,
        blockedLibraries: [],
        exceptedLibraries: [],
        repoFilters: { minStars: 0, allowedLicenses: [] },
      },
      select: { allowedLibraries: [] },
    },
  };
}

type DeepPartial<T> = T extends unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
export type PolicyPatch = DeepPartial<Policy>;

/** Merges a partial policy into a full one: objects merge key by key, arrays and scalars replace. */
export function mergePolicy(base: Policy, patch: unknown): unknown {
  return deepMerge(base, patch);
}

function deepMerge(base: unknown, patch: unknown): unknown {
  if (patch === undefined) return base;
  if (isPlainObject(base) && isPlainObject(patch)) {
    const out: Record<string, unknown> = { ...base };
    for (const [k, v] of Object.entries(patch)) out[k] = deepMerge(base[k], v);
    return out;
  }
  return patch;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads a stored policy; a missing or unreadable column gives the default (fields added later get defaults too). */
export function parseStoredPolicy(json: string | null): Policy {
  if (!json) return defaultPolicy();
  try {
    const r = policySchema.safeParse(mergePolicy(defaultPolicy(), JSON.parse(json)));
    return r.success ? r.data : defaultPolicy();
  } catch {
    return defaultPolicy();
  }
}
