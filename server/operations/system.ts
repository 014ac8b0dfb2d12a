import { ApiError } from '../../lib/errors.ts';
import type { LicenseService } from '../license/license.ts';
import type { Principal } from '../../lib/model.ts';
import type { SystemReport, TeamspaceReport } from '../system/report.ts';
import type { HealthReport } from '../system/health.ts';
import { isInstanceOwner } from './admit.ts';
import { healthOperation, licenseInstallOperation, licenseOperation, readyOperation, systemOperation } from '../contracts/system.ts';
import type { binder } from './bind.ts';

/** The vendor's `stacks license issue`: signs a license file with a private key; no data dir, no caller, nothing to admit. */
export { signLicense } from '../license/license.ts';

export interface SystemOperationDeps {
  license: Pick<LicenseService, 'install' | 'status'>;
  /** GET /api/health's report. */
  health(): Promise<HealthReport>;
  /** Whether the database answers (GET /api/ready). */
  databaseAnswers(): Promise<boolean>;
  systemReport(): Promise<SystemReport>;
  /** The figures of the principal's teamspace, as its members may see them. */
  teamspaceReport(p: Principal): Promise<TeamspaceReport>;
  defaultTeamspaceId(): number;
}

/**
 * The instance itself: its license (installed by an owner of the default teamspace, which
 * administers it) and its figures: the instance's totals to its owner, a teamspace's own figures
 * to that teamspace's owners and admins.
 */
export function systemOperations(bind: ReturnType<typeof binder>, d: SystemOperationDeps) {
  /** What anyone may know of the license (never its signature). */
  const licenseView = (st: ReturnType<LicenseService['status']>) => ({ state: st.state, message: st.message, signedBy: st.signedBy, license: st.license });
  return {
    health: bind(healthOperation, () => d.health()),
    ready: bind(readyOperation, async () => {
      if (!(await d.databaseAnswers())) throw new ApiError('not_ready', 'The database does not answer.');
      return { status: 'ready' as const };
    }),
    license: bind(licenseOperation, () => licenseView(d.license.status())),
    licenseInstall: bind(licenseInstallOperation, async (i, p) => {
      if (p && p.teamspaceId !== d.defaultTeamspaceId())
        throw new ApiError('forbidden', "The license is the whole instance's: an owner of the default teamspace installs it.");
      return licenseView(await d.license.install(i.license));
    }),
    system: bind(
      systemOperation,
      async (_i, p, caller): Promise<SystemReport | TeamspaceReport> =>
        p && !isInstanceOwner(caller, p, d.defaultTeamspaceId()) ? d.teamspaceReport(p) : d.systemReport(),
    ),
  };
}
