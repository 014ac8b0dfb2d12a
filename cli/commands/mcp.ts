import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { configFrom, withDataDir } from '../context.ts';
import { createLogger } from '../../server/log.ts';
import { createServices } from '../../server/services.ts';
import { ApiError } from '../../lib/errors.ts';
import { createMcpServer } from '../../server/mcp/server.ts';
import { localBackend, remoteBackend, type DocsBackend } from '../../server/mcp/backend.ts';
import { VERSION } from '../../server/version.ts';

interface McpOptions {
  dataDir?: string;
  dev?: boolean;
  apiKey?: string;
  url?: string;
  logLevel?: string;
}

/**
 * `stacks mcp`: MCP over stdio for editors that start a local process. Against the data dir
 * (services called directly, no HTTP server needed) or, with --url, against a remote instance's
 * REST API. stdout carries only the protocol; every log line goes to stderr.
 */
export function mcpCommand(program: Command): void {
  withDataDir(program.command('mcp').description('serve the MCP tools over stdio (for editors and AI assistants)'))
    .option('--api-key <key>', 'API key to act as (env STACKS_API_KEY); optional when anonymous search is allowed')
    .option('--url <url>', 'remote Stacks instance (http://host:3000 or http://host:3000/api) instead of the local data dir')
    .option('--log-level <level>', 'stderr log level (default warn)')
    .action(async (opts: McpOptions) => {
      const apiKey = opts.apiKey || process.env.STACKS_API_KEY || null;
      const level = opts.logLevel ?? 'warn';
      const log = createLogger(level);
      let backend: DocsBackend;
      let cleanup = () => {};
      if (opts.url) {
        let protocol = '';
        try {
          protocol = new URL(opts.url).protocol;
        } catch {
          // reported below
        }
        if (protocol !== 'http:' && protocol !== 'https:') throw new ApiError('validation_error', `--url must be an http(s) URL, not "${opts.url}".`);
        backend = remoteBackend(opts.url, apiKey);
      } else {
        const config = { ...configFrom({ dataDir: opts.dataDir, dev: opts.dev }), logLevel: level as never };
        const services = await createServices(config, log);
        const principal = apiKey ? services.keys.verify(apiKey) : null;
        if (apiKey && !principal) {
          services.store.close();
          throw new ApiError('invalid_api_key', 'The API key is invalid or has been revoked.');
        }
        if (!principal && !config.allowAnonymousSearch) {
          services.store.close();
          throw new ApiError('invalid_api_key', 'This instance does not allow anonymous search: pass --api-key KEY or set STACKS_API_KEY.');
        }
        backend = localBackend(services, principal);
        cleanup = () => services.store.close();
      }
      const server = createMcpServer(backend, {
        version: VERSION,
        onUnexpected: (err) => log.error({ err: (err as Error)?.message, stack: (err as Error)?.stack }, 'MCP tool failed'),
      });
      const transport = new StdioServerTransport();
      await server.connect(transport);
      log.info({ mode: opts.url ? 'remote' : 'local', url: opts.url }, 'Stacks MCP server running on stdio');
      // The client ends the session by closing our stdin (or by a signal).
      await new Promise<void>((resolve) => {
        process.stdin.once('end', resolve);
        process.stdin.once('close', resolve);
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close().catch(() => {});
      cleanup();
      process.exit(0);
    });
}
