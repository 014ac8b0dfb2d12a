import type { Command } from 'commander';
import { configFrom, withDataDir } from '../context.ts';
import { startServer } from '../../server/server.ts';

export function serveCommand(program: Command): void {
  withDataDir(program.command('serve').description('start the HTTP server (API, MCP and web UI)'))
    .option('--port <port>', 'port to listen on (env PORT, default 3000)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL)')
    .action(async (opts: { dataDir?: string; dev?: boolean; port?: string; logLevel?: string }) => {
      const config = configFrom(opts);
      const server = await startServer(config);
      // One write, so that whoever reads the URL line also has the first key.
      let banner = `Stacks is running at ${server.url}  (data: ${config.dataDir}${config.dev ? ', dev mode' : ''})\n`;
      if (server.firstKey) {
        banner +=
          `\nFirst start: created an owner API key. It is shown only now; store it safely:\n\n  ${server.firstKey.key}\n\n` +
          `Use it as: Authorization: Bearer <key>\n\n`;
      }
      const lic = server.services.license.status();
      if (lic.state !== 'valid') banner += `License: ${lic.message} Search works; import and crawl need a license.\n`;
      process.stdout.write(banner);
      const shutdown = async () => {
        await server.close();
        process.exit(0);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
}
