import type { Express } from 'express';
import { mountSystem, type SystemDeps } from './system.ts';
import { mountTeams, type TeamRouteDeps } from './teams.ts';
import { mountJobs, type JobRouteDeps } from './jobs.ts';
import { mountCrawl, type CrawlRouteDeps } from './crawl.ts';
import { mountSources, type SourceRouteDeps } from './sources.ts';
import { mountContext, type ContextRouteDeps } from './context.ts';
import { mountSearch, type SearchRouteDeps } from './search.ts';
import { mountImport, type ImportRouteDeps } from './import.ts';
import { mountHealth, type HealthDeps } from './health.ts';
import { mountMcp, type McpRouteDeps } from './mcp.ts';
import { mountLibraries, type LibrariesRouteDeps } from './libraries.ts';
import { mountWeb } from './web.ts';
import { mountAudit, type AuditRouteDeps } from './audit.ts';
import { mountSession, type SessionRouteDeps } from './session.ts';
import { mountGit, type GitRouteDeps } from './git.ts';
import { mountBackup, type BackupRouteDeps } from './backup.ts';
import { mountExport, type ExportRouteDeps } from './exports.ts';
import { mountMetrics, type MetricsRouteDeps } from './metrics.ts';
import { mountDeclared, type DeclaredRouteDeps } from './declared.ts';
import { mountInvitations, type InvitationRouteDeps } from './invitations.ts';
import { mountInstance, type InstanceRouteDeps } from './instance.ts';

/** What the routes together need; each route module declares and receives its own part. */
export type RouteDeps = SystemDeps &
  TeamRouteDeps &
  JobRouteDeps &
  CrawlRouteDeps &
  SourceRouteDeps &
  HealthDeps &
  McpRouteDeps &
  ImportRouteDeps &
  ContextRouteDeps &
  SearchRouteDeps &
  LibrariesRouteDeps &
  AuditRouteDeps &
  SessionRouteDeps &
  GitRouteDeps &
  BackupRouteDeps &
  ExportRouteDeps &
  MetricsRouteDeps &
  DeclaredRouteDeps &
  InvitationRouteDeps &
  InstanceRouteDeps;

/** Paths whose handlers read the raw request body themselves (streamed uploads); the JSON parser skips them. */
export const rawBodyPaths = new Set<string>(['/api/import-libraries']);

/**
 * Mounts every route module, in this order. Each gets the deps object typed as what it needs and
 * reads the services from it per request (a test may replace one, e.g. the access policy).
 */
export function mountRoutes(app: Express, deps: RouteDeps): void {
  mountSystem(app, deps);
  mountTeams(app, deps);
  mountJobs(app, deps);
  mountAudit(app, deps);
  mountBackup(app, deps);
  mountExport(app, deps);
  mountMetrics(app, deps);
  mountDeclared(app, deps);
  mountSession(app, deps);
  mountInvitations(app, deps);
  mountInstance(app, deps);
  mountCrawl(app, deps);
  mountSources(app, deps);
  mountGit(app, deps);
  mountHealth(app, deps);
  mountMcp(app, deps);
  mountImport(app, deps);
  mountContext(app, deps);
  mountSearch(app, deps);
  mountLibraries(app, deps);
  mountWeb(app);
}
