import type { Command } from 'commander';
import { configFrom, requireStacksDatabase, withDataDir } from '../context.ts';
import { apiKeyOf, checkRemoteUrl, withRemote } from '../remote.ts';
import { createLogger } from '../../server/log.ts';
import { createServices } from '../../server/services.ts';
import { localBackend, remoteBackend, type DocsBackend } from '../../server/mcp/backend.ts';
import { LOCAL } from '../../server/operations/index.ts';
import { VERSION } from '../../server/version.ts';

interface McpOptions {
  dataDir?: string;
  dev?: boolean;
  apiKey?: string;
  key?: string;
  url?: string;
  json?: boolean;
  logLevel?: string;
}

/**
 * `stacks mcp`: MCP over stdio for editors that start a local process. Against the data dir
 * (services called directly, no HTTP server needed) or, with --url, against a remote instance's
 * REST API. stdout carries only the protocol; every log line goes to stderr.
 */
export function mcpCommand(program: Command): void {
  // stdout carries the MCP protocol, so --json changes only how a start-up error is printed.
  withRemote(
    withDataDir(program.command('mcp').description('serve the MCP tools over stdio (for editors and AI assistants)')),
    'its REST API answers the tools',
  )
    .option('--log-level <level>', 'stderr log level (default warn)')
    .action(async (opts: McpOptions) => {
      // The key to act as; optional when anonymous search is allowed.
      const apiKey = apiKeyOf(opts);
      const level = opts.logLevel ?? 'warn';
      const log = createLogger(level);
      let backend: DocsBackend;
      let cleanup = async (): Promise<void> => {};
      if (opts.url) {
        backend = remoteBackend(checkRemoteUrl(opts.url), apiKey);
      } else {
        const config = { ...configFrom({ dataDir: opts.dataDir, dev: opts.dev }), logLevel: level as never };
        requireStacksDatabase(config);
        const services = await createServices(config, log);
        cleanup = async () => await services.store.close();
        // Whom the session acts for: the key, checked once here with the rules of a request (server/operations/callers.ts).
        const caller = await services.operations.stdioCaller({ apiKey }, LOCAL).catch(async (err: unknown) => {
          await cleanup();
          throw err;
        });
        backend = localBackend(services.operations, caller);
      }
      // The MCP SDK is loaded by this command only (it is half a second of every CLI start otherwise).
      const [{ createMcpServer }, { StdioServerTransport }] = await Promise.all([
        import('../../server/mcp/server.ts'),
        import('@modelcontextprotocol/sdk/server/stdio.js'),
      ]);
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
      await cleanup();
      process.exit(0);
    });
}
