import type { Operation } from './operation.ts';
import { contextOperation, librariesOperation, libsSearchOperation, searchOperation } from './search.ts';
import {
  addLlmsTxtOperation,
  addOpenApiOperation,
  addWebsiteOperation,
  fileUploadOperation,
  importOperation,
  openApiUploadOperation,
  parseWebsiteOperation,
} from './sources.ts';
import { libraryDeleteOperation, libraryGetOperation, libraryRefreshOperation, librarySnippetsOperation, libraryUpdateOperation } from './libraries.ts';
import { auditListOperation } from './audit.ts';
import { gitHostAddOperation, gitHostRemoveOperation, gitHostsListOperation, parseRepoOperation, projectRefreshOperation } from './git.ts';
import * as users from './users.ts';
import * as invitations from './invitations.ts';
import * as instance from './instance.ts';
import { jobCancelOperation, jobGetOperation, jobRetryOperation, jobsListOperation } from './jobs.ts';
import * as teams from './teams.ts';
import { backupCreateOperation, backupDownloadOperation, backupsListOperation } from './backup.ts';
import { exportOperation } from './exports.ts';
import { metricsOperation } from './metrics.ts';
import { reconcileOperation } from './declared.ts';
import { healthOperation, licenseInstallOperation, licenseOperation, openApiOperation, pingOperation, readyOperation, systemOperation } from './system.ts';

/** Every operation of the HTTP API, in the order the OpenAPI description lists them. */
export const OPERATIONS: readonly Operation[] = [
  searchOperation,
  contextOperation,
  libsSearchOperation,
  librariesOperation,
  libraryGetOperation,
  libraryUpdateOperation,
  librarySnippetsOperation,
  libraryDeleteOperation,
  libraryRefreshOperation,
  importOperation,
  parseWebsiteOperation,
  parseRepoOperation,
  projectRefreshOperation,
  gitHostsListOperation,
  gitHostAddOperation,
  gitHostRemoveOperation,
  addWebsiteOperation,
  addOpenApiOperation,
  openApiUploadOperation,
  addLlmsTxtOperation,
  fileUploadOperation,
  jobsListOperation,
  jobGetOperation,
  jobCancelOperation,
  jobRetryOperation,
  teams.policiesGetOperation,
  teams.policiesUpdateOperation,
  teams.usageOperation,
  teams.teamspaceGetOperation,
  teams.teamspaceUpdateOperation,
  teams.rulesListOperation,
  teams.ruleAddOperation,
  teams.ruleRemoveOperation,
  teams.membersListOperation,
  teams.memberAddOperation,
  teams.memberRoleOperation,
  teams.memberRemoveOperation,
  teams.keysListOperation,
  teams.keyCreateOperation,
  teams.keyRevokeOperation,
  auditListOperation,
  backupCreateOperation,
  backupsListOperation,
  backupDownloadOperation,
  exportOperation,
  metricsOperation,
  reconcileOperation,
  users.sessionCreateOperation,
  users.sessionGetOperation,
  users.sessionDeleteOperation,
  users.setupOperation,
  users.usersListOperation,
  users.userCreateOperation,
  users.userUpdateOperation,
  invitations.invitationCreateOperation,
  invitations.invitationsListOperation,
  invitations.invitationRevokeOperation,
  invitations.invitationPreviewOperation,
  invitations.invitationAcceptOperation,
  instance.settingsGetOperation,
  instance.settingsUpdateOperation,
  instance.gettingStartedOperation,
  pingOperation,
  healthOperation,
  readyOperation,
  licenseOperation,
  licenseInstallOperation,
  systemOperation,
  openApiOperation,
];
