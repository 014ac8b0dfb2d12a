import type { Express } from 'express';
import type { Services } from '../../services.ts';
import { mountSystem } from './system.ts';
import { mountTeams } from './teams.ts';
import { mountJobs } from './jobs.ts';
import { mountCrawl } from './crawl.ts';
import { mountSources } from './sources.ts';
import { mountContext } from './context.ts';
import { mountSearch } from './search.ts';
import { mountImport } from './import.ts';
import { mountHealth } from './health.ts';
import { mountMcp } from './mcp.ts';
import { mountLibraries } from './libraries.ts';
import { mountWeb } from './web.ts';

export type Mount = (app: Express, services: Services) => void;

/** Paths whose handlers read the raw request body themselves (streamed uploads); the JSON parser skips them. */
export const rawBodyPaths = new Set<string>(['/api/import-libraries']);

/** Every route module, in mount order. */
export const routers: Mount[] = [mountSystem, mountTeams, mountJobs, mountCrawl, mountSources, mountHealth, mountMcp, mountImport, mountContext, mountSearch, mountLibraries, mountWeb];
