import type { Principal } from '../../lib/model.ts';
import type { Library } from '../../lib/model.ts';
import { OWN_DOCS_ID } from '../../lib/model.ts';
import type { LicenseStatus } from '../license/license.ts';

export type ChecklistId = 'license' | 'library' | 'key' | 'invite';

export interface Checklist {
  done: boolean;
  items: { id: ChecklistId; done: boolean; detail: string }[];
}

/** What the checklist reads; each a view of real state, so an item is done when the thing exists, not when a flag says so. */
export interface ChecklistSources {
  license(): LicenseStatus;
  /** Libraries the principal may read. */
  libraries(p: Principal): Promise<Library[]>;
  /** Keys of the teamspace not revoked, with whether each is the one printed at first start. */
  keys(teamspaceId: number): Promise<{ firstStart: boolean }[]>;
  /** Console users of the teamspace. */
  users(teamspaceId: number): Promise<number>;
  /** Whether the teamspace ever invited anyone. */
  invited(teamspaceId: number): Promise<boolean>;
}

/**
 * The first hour of an administrator: a license, a first library, a key for an assistant, a
 * teammate. The instance's own documentation is no library of theirs, and the key printed at first
 * start was not made by anyone: neither counts.
 */
export async function checklist(src: ChecklistSources, p: Principal): Promise<Checklist> {
  const lic = src.license();
  const libraries = (await src.libraries(p)).filter((l) => l.id !== OWN_DOCS_ID).length;
  const keys = (await src.keys(p.teamspaceId)).filter((k) => !k.firstStart).length;
  const users = await src.users(p.teamspaceId);
  const invited = await src.invited(p.teamspaceId);
  const items: Checklist['items'] = [
    { id: 'license', done: lic.state === 'valid', detail: lic.state === 'valid' ? lic.message : `${lic.state}: ${lic.message}` },
    { id: 'library', done: libraries > 0, detail: libraries > 0 ? `${libraries} ${libraries === 1 ? 'library' : 'libraries'}` : 'no library yet' },
    { id: 'key', done: keys > 0, detail: keys > 0 ? `${keys} ${keys === 1 ? 'key' : 'keys'}` : 'no key made yet' },
    { id: 'invite', done: invited || users > 1, detail: invited || users > 1 ? `${users} ${users === 1 ? 'account' : 'accounts'}` : 'nobody invited yet' },
  ];
  return { done: items.every((i) => i.done), items };
}
