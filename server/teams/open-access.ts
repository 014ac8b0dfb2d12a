import type { AccessPolicy } from '../search/answer-types.ts';

/** Access without teamspace filters or rules: every library is visible. Used until policies are configured. */
export const openAccess: AccessPolicy = {
  canSee: () => true,
  filtersActive: () => false,
  rules: (_p, libraryIds) => ({ global: [], libraries: libraryIds.map((libraryId) => ({ libraryId, libraryOwn: [], libraryTeam: [] })) }),
};
