import { ApiError } from '../../lib/errors.ts';
import type { LicenseService } from '../license/license.ts';
import type { SystemReport } from '../system/report.ts';
import { licenseInstallOperation, systemOperation } from '../contracts/system.ts';
import type { binder } from './bind.ts';

export interface SystemOperationDeps {
  license: Pick<LicenseService, 'install'>;
  systemReport(): SystemReport;
  defaultTeamspaceId(): number;
}

/** The instance itself: its license (installed by an owner of the default teamspace, which administers it) and its figures. */
export function systemOperations(bind: ReturnType<typeof binder>, d: SystemOperationDeps) {
  return {
    licenseInstall: bind(licenseInstallOperation, (i, p) => {
      if (p && p.teamspaceId !== d.defaultTeamspaceId()) throw new ApiError('forbidden', 'The license is the whole instance\'s: an owner of the default teamspace installs it.');
      const st = d.license.install(i.license);
      return { state: st.state, message: st.message, signedBy: st.signedBy, license: st.license };
    }),
    system: bind(systemOperation, () => d.systemReport()),
  };
}
