import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.ts';
import { createLogger, type Logger } from './log.ts';
import { createServices, startBackground, type ServiceOverrides, type Services } from './services.ts';
import { createApp } from './http/app.ts';
import { answerClientError } from './http/client-error.ts';
import type { CreatedKey } from './auth/keys.ts';
import { claimPidFile } from './system/pid-file.ts';
import { ensureWritableDataDir } from './system/data-dir.ts';
import { metricsServer } from './http/routes/metrics.ts';

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  /** The key created on first start (shown once), or null. */
  firstKey: CreatedKey | null;
  /** The metrics port's /metrics (STACKS_METRICS_PORT), or null. */
  metricsUrl: string | null;
  /** On first start: the one-time link for creating the first owner's console account (shown once), or null. */
  setupUrl: string | null;
  close(): Promise<void>;
}

/** Builds the services, starts the job workers and listens. */
export async function startServer(config: Config, options: { log?: Logger; overrides?: ServiceOverrides } = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  ensureWritableDataDir(config.dataDir);
  const services = await createServices(config, log, options.overrides);
  const firstKey = await services.keys.bootstrap();
  const setupToken = await services.users.newSetupToken();
  const stopBackground = startBackground(services);
  services.jobs.start();
  const app = createApp(services);
  const server = http.createServer(app);
  // Requests the HTTP parser rejects (431, 400, ...) get the {error, message} body too.
  server.on('clientError', answerClientError);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const metricsPort = config.metricsPort !== undefined ? await listen(metricsServer(services.metrics), config.metricsPort, config.metricsHost) : null;
  // Names this process as the data dir's server (a restore refuses to run under it).
  const releasePid = claimPidFile(config.dataDir);
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${shownHost}:${port}`;
  // The setup link is opened from the administrator's machine: on the public address when there is one.
  const setupUrl = setupToken ? await services.publicUrl.link(`/#/setup/${setupToken}`, url) : null;
  log.info({ url, dataDir: config.dataDir, dev: config.dev }, 'Stacks is listening');
  let closed = false;
  return {
    url,
    port,
    services,
    firstKey,
    setupUrl,
    metricsUrl: metricsPort
      ? `http://${config.metricsHost.includes(':') ? `[${config.metricsHost}]` : config.metricsHost}:${(metricsPort.address() as AddressInfo).port}/metrics`
      : null,
    async close() {
      if (closed) return;
      closed = true;
      stopBackground();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      if (metricsPort) await new Promise<void>((resolve) => metricsPort.close(() => resolve()));
      await services.jobs.stop();
      await services.embedder?.close?.();
      await services.store.close();
      releasePid();
    },
  };
}

function listen(server: http.Server, port: number, host: string): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
