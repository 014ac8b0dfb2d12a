// The web UI calls the same public API as every other client; it keeps no state but the optional key.
const $ = (id) => document.getElementById(id);
const keyInput = $('key');
keyInput.value = localStorage.getItem('stacks.key') ?? '';
keyInput.addEventListener('change', () => {
  localStorage.setItem('stacks.key', keyInput.value.trim());
  loadLibraries();
});

async function api(path) {
  const key = keyInput.value.trim();
  const res = await fetch(path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `HTTP ${res.status}`);
  return { body, headers: res.headers };
}

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function status(text, isError = false) {
  $('status').textContent = text;
  $('status').className = isError ? 'error' : '';
}

function snippetCard(s) {
  const card = el('article');
  card.append(el('h3', s.codeTitle ?? s.breadcrumb ?? s.pageId ?? 'Documentation'));
  card.append(el('div', `${s.libraryId} · ${s.codeId ?? s.pageId ?? ''}`, 'meta'));
  const text = s.codeDescription ?? s.content;
  if (text) card.append(el('p', text));
  for (const c of s.codeList ?? []) {
    const pre = el('pre');
    pre.append(el('code', c.code));
    card.append(pre);
  }
  return card;
}

$('search').addEventListener('submit', async (event) => {
  event.preventDefault();
  const params = new URLSearchParams({ query: $('query').value, type: 'json' });
  if ($('library').value.trim()) params.set('library', $('library').value.trim());
  if ($('version').value.trim()) params.set('version', $('version').value.trim());
  status('Searching…');
  $('results').replaceChildren();
  try {
    const { body, headers } = await api(`/api/v3/search?${params}`);
    const snippets = [...body.codeSnippets, ...body.infoSnippets];
    const note = headers.get('x-stacks-search-reason') ? ` (${headers.get('x-stacks-search-reason')})` : '';
    status(`${snippets.length} snippets${note}`);
    $('results').replaceChildren(...snippets.map(snippetCard));
  } catch (err) {
    status(err.message, true);
  }
});

async function loadLibraries() {
  const tbody = $('libraries').querySelector('tbody');
  try {
    const { body } = await api('/api/libraries');
    tbody.replaceChildren(
      ...body.libraries.map((l) => {
        const tr = el('tr');
        for (const v of [l.id, l.title, String(l.totalSnippets), l.versions.join(', '), l.lastUpdateDate.slice(0, 10)]) tr.append(el('td', v));
        return tr;
      }),
    );
  } catch (err) {
    tbody.replaceChildren();
    status(`Libraries: ${err.message}`, true);
  }
}

loadLibraries();
