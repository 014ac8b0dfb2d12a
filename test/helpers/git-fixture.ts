// The documentation repository of the git-source tests: hand-written pages in every format the
// source reads (markdown with front matter, MDX, reStructuredText, a notebook, plain text), two
// pages rebuilt from the pino corpus bundle, files the default exclusions must skip, a stacks.json,
// an MIT LICENSE (pino's), source files for the dynamic index, and tags v1.0.0 and v1.1.0.
import fs from 'node:fs';
import path from 'node:path';
import { CORPUS_BUNDLES, FIXTURES } from './fixtures.ts';
import { TestRepo } from './git-repos.ts';

interface BundleSnippet {
  id: string;
  title?: string;
  description?: string;
  language?: string;
  codeList?: { language: string; code: string }[];
  content?: string;
  breadcrumb?: string;
}

/** A page of a corpus bundle as markdown: its prose and code snippets under their headings. */
export function corpusPage(bundle: string, page: string): string {
  const lib = (
    JSON.parse(fs.readFileSync(path.join(CORPUS_BUNDLES, `${bundle}.json`), 'utf8')) as {
      libraries: { codeSnippets: BundleSnippet[]; infoSnippets: BundleSnippet[] }[];
    }
  ).libraries[0]!;
  const onPage = (s: BundleSnippet) => s.id.split('#')[0]!.endsWith(`/${page}`);
  const parts: string[] = [];
  for (const s of lib.infoSnippets.filter(onPage)) parts.push(`## ${s.breadcrumb?.split(' > ').pop() ?? 'Notes'}\n\n${s.content}`);
  for (const s of lib.codeSnippets.filter(onPage))
    parts.push(`## ${s.title}\n\n${s.description}\n\n\`\`\`${s.language}\n${s.codeList?.[0]?.code ?? ''}\n\`\`\``);
  return `# ${page.replace(/\.md$/, '')}\n\n${parts.join('\n\n')}\n`;
}

const NOTEBOOK = JSON.stringify({
  metadata: { kernelspec: { language: 'python', name: 'python3' } },
  cells: [
    { cell_type: 'markdown', source: ['# Widget notebook\n', '\n', 'Plot the sprocket telemetry of a widget with the notebook helpers.'] },
    { cell_type: 'code', source: ['from widget import telemetry\n', 'telemetry.plot_sprockets(limit=10)'], outputs: [{ text: 'IGNORED OUTPUT' }] },
  ],
});

const MDX = `import { Callout, Tabs, Tab } from '@site/components';
export const meta = { hidden: true };

# Components

<Callout type="warning" title="Careful with gizmos">
Gizmo components must be mounted inside a **WidgetRoot** element.
</Callout>

<Tabs>
  <Tab label="npm">
    \`\`\`bash
    npm install @acme/widget
    \`\`\`
  </Tab>
</Tabs>

The current theme is {props.theme} and the gizmo renders lazily.
`;

const RST = `Widget API
==========

Configuring sprockets
---------------------

Use :func:\`configure_sprockets\` to set the sprocket tension. See \`the manual <https://example.test/manual>\`_.

.. code-block:: python

   widget.configure_sprockets(tension=4)

.. note:: Tension above 9 voids the warranty.
`;

const SOURCE_TS = `/**
 * Checksums for widget manifests.
 */

/**
 * Computes the frobnication checksum of a widget manifest: a stable hash of its sprocket list,
 * used to detect drift between deployments.
 */
export function computeFrobnication(manifest: { sprockets: string[] }): string {
  return manifest.sprockets.join('|');
}

function internalHelper() {
  return 1;
}
`;

/** Builds and publishes the widget repository under `root` (tags v1.0.0 and v1.1.0, then main moves on). */
export function buildWidgetRepo(root: string): TestRepo {
  const repo = new TestRepo(root, 'acme/widget');
  repo
    .write({
      'README.md': '# Widget\n\nWidget renders dashboards from sprocket telemetry. Version one of the widget toolkit.\n',
      'docs/guide.md':
        '---\ntitle: Widget Guide\ndescription: How to mount and configure widgets.\n---\n\n# Mounting\n\nCall mountWidget with a root element to mount a widget.\n\n```js\nmountWidget(document.body, { theme: "dark" })\n```\n',
      LICENSE: fs.readFileSync(path.join(FIXTURES, 'corpus/licenses/pino/LICENSE')),
    })
    .commit('v1.0.0', 'v1.0.0')
    .write({
      'docs/guide.md':
        '---\ntitle: Widget Guide\ndescription: How to mount and configure widgets.\n---\n\n# Mounting\n\nCall mountWidget with a root element to mount a widget in version 1.1, with hot reload.\n\n```js\nmountWidget(document.body, { theme: "dark", hotReload: true })\n```\n',
    })
    .commit('v1.1.0', 'v1.1.0')
    .write({
      'stacks.json': JSON.stringify({
        title: 'Widget Toolkit',
        description: 'Dashboards from sprocket telemetry',
        excludeFiles: ['docs/internal-notes.md'],
        rules: ['Always dispose widgets with widget.dispose().'],
        previousVersions: ['v1.0.0'],
      }),
      'docs/components.mdx': MDX,
      'docs/api.rst': RST,
      'docs/tutorial.ipynb': NOTEBOOK,
      'docs/faq.txt': 'Why does the widget flicker?\n\nThe flux capacitor of the widget needs a warm-up of three seconds before the first frame.\n',
      'docs/logging/child-loggers.md': corpusPage('pino', 'child-loggers.md'),
      'docs/logging/redaction.md': corpusPage('pino', 'redaction.md'),
      'docs/ja/guide.md': '# ガイド\n\nウィジェットをマウントするには mountWidget を呼び出します。翻訳ページ excludedjapanese。\n',
      'archived/old.md': '# Old\n\nThe excludedarchive page of an old widget release.\n',
      'docs/internal-notes.md': '# Notes\n\nexcludedinternal notes that stacks.json leaves out.\n',
      'CHANGELOG.md': '# Changelog\n\n- excludedchangelog entry\n',
      'src/frob.ts': SOURCE_TS,
      'src/server.py':
        '"""Telemetry server of the widget toolkit."""\n\n\ndef serve_telemetry(port=8080):\n    """Starts the telemetry server on the given port."""\n    return port\n',
    })
    .commit('main moves on')
    .publish();
  return repo;
}
