import type { Library, LibraryVisibility } from './model.ts';

/**
 * Who adds a library, and so who will own it: a key's member in its teamspace, or the local
 * operator (the CLI on the server's files), who acts in the default teamspace.
 */
export interface Submitter {
  memberId: number | null;
  teamspaceId: number;
  /** The visibility a new library gets (an existing library keeps its own). */
  visibility: LibraryVisibility;
  operator: boolean;
}

/**
 * Why `who` may not rebuild `existing`: another teamspace owns it. A library is never replaced by
 * another teamspace, with or without force; the operator may rebuild any (its owner stays).
 */
export function ownerConflict(existing: Pick<Library, 'id' | 'teamspaceId'> | null, who: Submitter): string | null {
  if (!existing || who.operator || existing.teamspaceId === null || existing.teamspaceId === who.teamspaceId) return null;
  return `The library ID ${existing.id} is taken by another teamspace; choose another title, collection name or address.`;
}

/** The local operator adding to the default teamspace (the CLI, tests and benches that add directly). */
export function operatorSubmitter(defaultTeamspaceId: number, visibility: LibraryVisibility = 'teamspace'): Submitter {
  return { memberId: null, teamspaceId: defaultTeamspaceId, visibility, operator: true };
}
