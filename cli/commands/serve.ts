import type { Command } from 'commander';
import { choiceOption, configFrom, withDataDir, type CommonOpts } from '../context.ts';
import { startServer } from '../../server/server.ts';
import { configSchema } from '../../server/config.ts';
import { LOCAL } from '../../server/operations/index.ts';

export function serveCommand(program: Command): void {
  withDataDir(program.command('serve').description('start the HTTP server (API, MCP and web UI); creates the data dir and its database when new'))
    .option('--port <port>', 'port to listen on (env PORT, default 3000)')
    .addOption(choiceOption('--log-level <level>', 'log level (env LOG_LEVEL)', configSchema.shape.logLevel.unwrap().options))
    .action(async (opts: CommonOpts & { port?: string; logLevel?: string }) => {
      const config = configFrom(opts);
      const server = await startServer(config);
      const lic = await server.services.operations.license({}, LOCAL);
      // One write, so that whoever reads the URL line also has the first key.
      if (opts.json) {
        const started = {
          url: server.url,
          port: server.port,
          dataDir: config.dataDir,
          dev: config.dev,
          firstKey: server.firstKey?.key ?? null,
          setupUrl: server.setupUrl,
          license: { state: lic.state, message: lic.message },
        };
        process.stdout.write(`${JSON.stringify(started)}\n`);
      } else {
        let banner = `Stacks is running at ${server.url}  (data: ${config.dataDir}${config.dev ? ', dev mode' : ''})\n`;
        if (server.firstKey) {
          banner +=
            `\nFirst start: created an owner API key. It is shown only now; store it safely:\n\n  ${server.firstKey.key}\n\n` +
            `Use it as: Authorization: Bearer <key>\n\n`;
        }
        if (server.setupUrl) {
          banner += `Create the first owner's account for the web console (this link works once, for 7 days):\n\n  ${server.setupUrl}\n\n`;
        }
        if (lic.state !== 'valid') banner += `License: ${lic.message} Search works; import and crawl need a license.\n`;
        // Links and MCP configurations are made for other machines: without a public address they carry this one.
        if (!(await server.services.publicUrl.current()))
          banner += `Public address: not set; links and MCP configurations use the browser's address. Set STACKS_PUBLIC_URL (or Admin → Public address in the console).\n`;
        process.stdout.write(banner);
      }
      const shutdown = async () => {
        await server.close();
        process.exit(0);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
}
