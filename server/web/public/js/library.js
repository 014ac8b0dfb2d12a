// A library's page: its facts and versions, who may read it, a try-a-question box that shows the
// answer exactly as /api/v2/context returns it, its snippets a page at a time, and (for owners and
// admins of its teamspace) visibility, re-crawl and delete.
import { $, actionButton, api, day, el, fillRows, row, setStatus, when } from './core.js';
import { showAnswer, snippetCard } from './render.js';
import { libraries, loadLibraries } from './search.js';

let shown = null;
let nextPage = null;

const path = (id) => `/api/libraries${id.split('/').map(encodeURIComponent).join('/')}`;

export async function showLibrary(id) {
  shown = id;
  const listed = libraries.find((l) => l.id === id);
  $('ask-results').replaceChildren();
  $('snippets').replaceChildren();
  setStatus('ask-status', '');
  setStatus('library-status', '');
  $('library-title').textContent = listed ? `${listed.title} (${id})` : id;
  $('library-description').textContent = listed?.description ?? '';
  let view = null;
  try {
    view = (await api(path(id))).body;
  } catch {
    $('library-description').textContent = 'No such library, or it is not visible to you.';
  }
  $('ask').hidden = !view;
  $('library-admin').hidden = !view || !view.grants;
  $('snippets-more').hidden = true;
  if (!view) return $('library-facts').replaceChildren();
  $('library-title').textContent = `${view.title} (${id})`;
  $('library-description').textContent = view.description;
  const current = view.versions.find((v) => v.tag === 'current') ?? view.versions[0];
  const facts = [
    ['Source', view.sourceUrl ?? view.sourceType],
    ['Type', view.sourceType],
    ['Owner', view.teamspace ?? '—'],
    ['Visible to', view.visibility === 'instance' ? 'everyone' : `teamspace ${view.teamspace}${view.grants?.length ? ` + ${view.grants.join(', ')}` : ''}`],
    ['Snippets', (current?.snippets ?? 0).toLocaleString()],
    ['Tokens', (current?.tokens ?? 0).toLocaleString()],
    ['Updated', day(view.updatedAt)],
    ['License', view.license ?? '—'],
    [
      'Trust',
      [
        view.stars !== null && view.stars !== undefined ? `${view.stars} stars` : '',
        view.trustScore !== null && view.trustScore !== undefined ? `score ${view.trustScore}` : '',
        view.verified ? 'verified' : '',
      ]
        .filter(Boolean)
        .join(', ') || '—',
    ],
  ];
  $('library-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', k), el('dd', v)]));
  fillRows(
    'versions',
    view.versions.map((v) => row([v.tag || 'current', v.state, v.snippets.toLocaleString(), v.tokens.toLocaleString(), when(v.updatedAt)])),
    'No version is indexed yet.',
  );
  if (view.grants) {
    $('visibility').value = view.visibility;
    $('grants').value = view.grants.join(', ');
    $('meta-title').value = view.title;
    $('meta-description').value = view.description;
    $('meta-schedule').value = view.schedule ?? '';
    $('schedule-field').hidden = view.sourceType !== 'website';
    // A crawled website is crawled again; a Git repository re-reads the files that changed.
    $('refresh').hidden = view.sourceType !== 'website' && !view.repoUrl;
    $('refresh').textContent = view.repoUrl ? 'Refresh from Git' : 'Re-crawl now';
  }
  $('ask-query').focus();
  await moreSnippets(true);
}

async function moreSnippets(first = false) {
  const params = new URLSearchParams({ limit: '20' });
  if (!first && nextPage) params.set('after', String(nextPage));
  try {
    const page = (await api(`${path(shown)}/snippets?${params}`)).body;
    if (first) $('snippets').replaceChildren();
    $('snippets').append(...page.snippets.map(snippetCard));
    if (first && page.snippets.length === 0) $('snippets').append(el('p', 'No snippets in the served version.', 'empty'));
    $('snippets-count').textContent = `${$('snippets').children.length} of ${page.total.toLocaleString()}`;
    nextPage = page.next;
    $('snippets-more').hidden = !page.next;
  } catch (err) {
    $('snippets-count').textContent = err.message;
  }
}

$('snippets-more').addEventListener('click', () => moreSnippets());

$('ask').addEventListener('submit', async (event) => {
  event.preventDefault();
  setStatus('ask-status', 'Searching…');
  $('ask-results').replaceChildren();
  try {
    const params = new URLSearchParams({ libraryId: shown, query: $('ask-query').value, type: 'json' });
    const { body, headers } = await api(`/api/v2/context?${params}`);
    showAnswer(body, 'ask-results', 'ask-status', headers);
  } catch (err) {
    setStatus('ask-status', err.message, true);
  }
});

$('library-access').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const grants = $('grants')
      .value.split(',')
      .map((g) => g.trim())
      .filter(Boolean);
    const json = { visibility: $('visibility').value, grants, title: $('meta-title').value, description: $('meta-description').value };
    if (!$('schedule-field').hidden) json.schedule = $('meta-schedule').value.trim() || null;
    await api(path(shown), { method: 'PATCH', json });
    // Shown after the page is read again (which clears the status line), so it stays.
    await showLibrary(shown);
    setStatus('library-status', json.schedule ? `Saved. Re-crawled on the schedule ${json.schedule}.` : 'Saved.');
  } catch (err) {
    setStatus('library-status', err.message, true);
  }
});

$('library-actions').append(
  actionButton('Re-crawl now', 'library-status', async () => {
    const { body } = await api(`${path(shown)}/refresh`, { method: 'POST' });
    setStatus('library-status', body.message);
  }),
  actionButton('Delete library', 'library-status', async () => {
    if (!confirm(`Delete ${shown} with all its versions? This cannot be undone.`)) return;
    await api(path(shown), { method: 'DELETE' });
    await loadLibraries();
    location.hash = '#/';
  }),
);
$('library-actions').firstChild.id = 'refresh';
