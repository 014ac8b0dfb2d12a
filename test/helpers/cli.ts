import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/log.ts';
import { createServices } from '../../server/services.ts';
import { tempDir } from './server.ts';

const TOPICS = ['retry', 'timeout', 'cache', 'stream', 'logger', 'plugin', 'schema', 'router'];

/**
 * A data dir holding one small library (/acme/widgets, 24 snippets written inline, no fixture
 * files), built through the services the way the server builds it. For CLI tests.
 */
export async function dataDirWithLibrary(): Promise<string> {
  const dataDir = tempDir('stacks-cli-');
  const services = await createServices(loadConfig({ dataDir, logLevel: 'silent', learnRanking: false, embedProvider: 'builtin' }, {}), createLogger('silent'));
  try {
    const build = services.writer.begin({ id: '/acme/widgets', title: 'Widgets', description: 'Widget toolkit', sourceType: 'repo' }, { tag: '' });
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
    build.commit();
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
