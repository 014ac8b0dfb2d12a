// The search page: a question over every library (or up to four named ones), and the library list.
import { $, api, el, fillRows, setStatus, when } from './core.js';
import { showAnswer } from './render.js';

/** The libraries the caller may see (GET /api/libraries), for the list and the library pages. */
export let libraries = [];

$('search').addEventListener('submit', async (event) => {
  event.preventDefault();
  const params = new URLSearchParams({ query: $('query').value, type: 'json' });
  if ($('library').value.trim()) params.set('library', $('library').value.trim());
  if ($('version').value.trim()) params.set('version', $('version').value.trim());
  setStatus('status', 'Searching…');
  $('results').replaceChildren();
  try {
    const { body, headers } = await api(`/api/v3/search?${params}`);
    showAnswer(body, 'results', 'status', headers, !params.has('library'));
  } catch (err) {
    setStatus('status', err.message, true);
  }
});

/** Where a library comes from, shortly: a site's host, or the kind of upload. */
function sourceOf(source) {
  try {
    const u = new URL(source);
    return u.protocol.startsWith('http') ? u.host : u.protocol.replace(':', '');
  } catch {
    return source || '—';
  }
}

export const libraryHref = (id) => `#/library${id.split('/').map(encodeURIComponent).join('/')}`;

function renderLibraries() {
  const filter = $('library-filter').value.trim().toLowerCase();
  const shown = libraries.filter((l) => !filter || `${l.id} ${l.title} ${l.source ?? ''} ${l.state ?? ''}`.toLowerCase().includes(filter));
  fillRows(
    'libraries',
    shown.map((l) => {
      const tr = el('tr');
      const link = el('a', l.id);
      link.href = libraryHref(l.id);
      const first = el('td');
      first.append(link);
      tr.append(first);
      for (const v of [
        l.title,
        sourceOf(l.source),
        l.totalSnippets.toLocaleString(),
        l.totalTokens.toLocaleString(),
        l.versions.join(', ') || 'current',
        l.state,
      ])
        tr.append(el('td', v));
      const updated = el('td', undefined, 'date');
      updated.append(when(l.lastUpdateDate));
      tr.append(updated);
      tr.addEventListener('click', (e) => {
        if (e.target !== link) location.hash = link.getAttribute('href');
      });
      return tr;
    }),
    libraries.length ? 'No library matches the filter.' : 'No libraries yet. Add documentation on the Add page.',
  );
  $('library-count').textContent = `${shown.length} of ${libraries.length}`;
}

$('library-filter').addEventListener('input', renderLibraries);

export async function loadLibraries() {
  try {
    libraries = (await api('/api/libraries')).body.libraries;
  } catch (err) {
    libraries = [];
    setStatus('status', `Libraries: ${err.message}`, true);
  }
  renderLibraries();
}
