import { Writable } from 'node:stream';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/log.ts';
import { createServices, onSqlite } from '../../server/services.ts';
import { tempDir } from './server.ts';

const TOPICS = ['retry', 'timeout', 'cache', 'stream', 'logger', 'plugin', 'schema', 'router'];

/**
 * A data dir holding one small library (/acme/widgets, 24 snippets written inline, no fixture
 * files), built through the services the way the server builds it. For CLI tests.
 */
export async function dataDirWithLibrary(): Promise<string> {
  const dataDir = tempDir('stacks-cli-');
  const services = onSqlite(
    await createServices(loadConfig({ dataDir, logLevel: 'silent', learnRanking: false, embedProvider: 'builtin' }, {}), createLogger('silent')),
  );
  try {
    const build = await services.writer.begin({ id: '/acme/widgets', title: 'Widgets', description: 'Widget toolkit', sourceType: 'repo' }, { tag: '' });
    await build.add(
      TOPICS.flatMap((t, i) => [
        {
          kind: 'code' as const,
          sourceId: `https://example.com/widgets/${t}.md#code`,
          title: `Configure the ${t} of a widget`,
          description: `How to set the ${t} option when creating a widget.`,
          language: 'js',
          pageTitle: `${t} guide`,
          codeList: [{ language: 'js', code: `const w = createWidget({ ${t}: ${i + 1} });\nawait w.start();` }],
        },
        {
          kind: 'info' as const,
          sourceId: `https://example.com/widgets/${t}.md#about`,
          content: `The ${t} option of a widget controls its ${t} behaviour. Widgets read it once at start.`,
          pageTitle: `${t} guide`,
        },
        {
          kind: 'info' as const,
          sourceId: `https://example.com/widgets/${t}.md#faq`,
          content: `Changing the ${t} of a running widget needs a restart of the widget.`,
          pageTitle: `${t} FAQ`,
        },
      ]),
    );
    await build.commit();
  } finally {
    services.store.close();
  }
  return dataDir;
}

/** Whether a CLI stderr is one error line without a stack trace. */
export function isOneLine(stderr: string): boolean {
  const lines = stderr.trim().split('\n');
  return lines.length === 1 && !/^\s+at /m.test(stderr);
}

/**
 * Runs one `stacks` command line in this process, as cli/main.ts runs it (buildProgram, then
 * reportError on a failure), with the environment runStacks gives a child; returns the same
 * {code, stdout, stderr}. For tests of parsing, output and error text, where no real process is at
 * stake: about a second of process start and module loading less per command. Exit codes through a
 * real process, signals, a closed stdout, workers keeping a process alive: use runStacks.
 * Commands run one at a time (process.stdout, process.stderr, process.env and process.exitCode are
 * swapped for the command's time).
 */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const [{ buildProgram }, { reportError, wantsJson }] = await Promise.all([import('../../cli/program.ts'), import('../../cli/errors.ts')]);
  const captured = { stdout: '', stderr: '' };
  const saved = {
    stdout: Object.getOwnPropertyDescriptor(process, 'stdout')!,
    stderr: Object.getOwnPropertyDescriptor(process, 'stderr')!,
    exitCode: process.exitCode,
    env: { ...process.env },
  };
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        captured[name] += String(chunk);
        done();
      },
    });
    Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });
  }
  Object.assign(process.env, { LOG_LEVEL: 'warn', STACKS_OWN_DOCS: 'false', STACKS_LEARN_RANKING: 'false', STACKS_EMBED_PROVIDER: 'builtin', ...env });
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k];
  process.exitCode = undefined;
  let code: number;
  try {
    await buildProgram().parseAsync(args, { from: 'user' });
    code = Number(process.exitCode ?? 0);
  } catch (err) {
    code = reportError(err, wantsJson(args));
  } finally {
    Object.defineProperty(process, 'stdout', saved.stdout);
    Object.defineProperty(process, 'stderr', saved.stderr);
    process.exitCode = saved.exitCode;
    for (const k of Object.keys(process.env)) if (!(k in saved.env)) delete process.env[k];
    Object.assign(process.env, saved.env);
  }
  return { code, ...captured };
}
