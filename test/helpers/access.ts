import type { AccessPolicy } from '../../server/search/answer-types.ts';

/**
 * An access policy a test (or bench/accounting.ts) can switch while the server runs: passed as the
 * `access` override when the services are built, it asks the policy set with `use()`, else the
 * real one. The switch lives here, not in the product's services.
 */
export function switchableAccess(): { override: (real: AccessPolicy) => AccessPolicy; use(policy: AccessPolicy | null): void; real(): AccessPolicy } {
  let real: AccessPolicy | null = null;
  let current: AccessPolicy | null = null;
  const now = () => current ?? real!;
  return {
    override: (r) => {
      real = r;
      return { canSee: (p, lib) => now().canSee(p, lib), filtersActive: (p) => now().filtersActive(p), rules: (p, ids) => now().rules(p, ids) };
    },
    use: (policy) => void (current = policy),
    real: () => real!,
  };
}
