import { ApiError } from '../../lib/errors.ts';
import type { Principal } from '../../lib/model.ts';
import type { PublicUrl } from '../system/public-url.ts';
import type { Checklist } from '../system/getting-started.ts';
import { gettingStartedOperation, settingsGetOperation, settingsUpdateOperation } from '../contracts/instance.ts';
import { isInstanceOwner } from './admit.ts';
import type { binder } from './bind.ts';

export interface InstanceOperationDeps {
  publicUrl: PublicUrl;
  /** The first-run checklist of the principal's teamspace (server/system/getting-started.ts). */
  checklist(p: Principal): Promise<Checklist>;
  defaultTeamspaceId(): number;
}

/** The instance's public address (read by anyone: it is the address they already reach; set by the instance's owner) and the first-run checklist. */
export function instanceOperations(bind: ReturnType<typeof binder>, d: InstanceOperationDeps) {
  return {
    settingsGet: bind(settingsGetOperation, () => d.publicUrl.view()),
    settingsUpdate: bind(settingsUpdateOperation, (i, p, caller) => {
      if (!isInstanceOwner(caller, p, d.defaultTeamspaceId()))
        throw new ApiError('forbidden', "The public address is the whole instance's: an owner of the default teamspace sets it.");
      return d.publicUrl.set(i.publicUrl);
    }),
    gettingStarted: bind(gettingStartedOperation, (_i, p) => {
      if (!p) throw new ApiError('validation_error', "The checklist is a teamspace's: ask it with a key or a console session.");
      return d.checklist(p);
    }),
  };
}
