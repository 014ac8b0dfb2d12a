// The web UI calls the same public API as every other client. It acts with the optional key kept in
// this browser, else as the signed-in user (the HTTP-only session cookie; changes carry its CSRF token).
// Snippet text is markdown written by whoever published the documentation: it is rendered by marked
// and sanitized by DOMPurify (both served from this instance, under /vendor) before it is shown.
/* global marked, DOMPurify */
const $ = (id) => document.getElementById(id);
const keyInput = $('key');
keyInput.value = localStorage.getItem('stacks.key') ?? '';
keyInput.addEventListener('change', () => {
  localStorage.setItem('stacks.key', keyInput.value.trim());
  loadLibraries();
});

/** The signed-in user and the session's CSRF token (GET /api/session), or nulls. */
let session = { user: null, csrfToken: null, sso: false };

async function api(path, options = {}) {
  const key = keyInput.value.trim();
  const headers = {};
  if (key) headers.authorization = `Bearer ${key}`;
  else if (options.method && session.csrfToken) headers['x-csrf-token'] = session.csrfToken;
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method: options.method ?? 'GET', headers, body: options.json === undefined ? undefined : JSON.stringify(options.json) });
  const body = res.status === 204 ? {} : await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.message || `HTTP ${res.status}`);
  return { body, headers: res.headers };
}

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (className) e.className = className;
  return e;
}

function setStatus(id, text, isError = false) {
  $(id).textContent = text;
  $(id).className = isError ? 'error' : '';
}

/** An http(s) URL, or null: only those become links. */
function webUrl(href, base) {
  try {
    const u = new URL(href, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

// Links in rendered markdown: relative ones resolved against the snippet's source page, anything
// but http(s) dropped, all opened in a new tab without handing this page to the target.
let linkBase = location.href;
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A' || !node.hasAttribute('href')) return;
  const href = webUrl(node.getAttribute('href'), linkBase);
  if (!href) return node.removeAttribute('href');
  node.setAttribute('href', href);
  node.setAttribute('target', '_blank');
  node.setAttribute('rel', 'noopener noreferrer');
});

function markdown(text, base) {
  linkBase = base ?? location.href;
  const box = el('div', undefined, 'prose');
  box.innerHTML = DOMPurify.sanitize(marked.parse(text, { gfm: true, async: false }), { FORBID_TAGS: ['style', 'form', 'input', 'button'] });
  return box;
}

async function copy(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // navigator.clipboard needs a secure context; plain HTTP on a LAN is not one.
    const area = el('textarea');
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
  button.textContent = 'Copied';
  setTimeout(() => (button.textContent = 'Copy'), 1500);
}

function codeBlock(example) {
  const figure = el('figure', undefined, 'code');
  const caption = el('figcaption');
  caption.append(el('span', example.language || 'text', 'lang'));
  const button = el('button', 'Copy', 'copy');
  button.type = 'button';
  button.addEventListener('click', () => copy(example.code, button));
  caption.append(button);
  const pre = el('pre');
  pre.append(el('code', example.code));
  figure.append(caption, pre);
  return figure;
}

function snippetCard(s) {
  const card = el('article');
  const source = s.codeId ?? s.pageId ?? '';
  card.append(el('h3', s.codeTitle ?? s.breadcrumb ?? source ?? 'Documentation'));
  const meta = el('div', undefined, 'meta');
  if (s.libraryId) meta.append(el('span', s.libraryId), ' · ');
  const url = webUrl(source);
  if (url) {
    const a = el('a', source);
    a.href = url;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    meta.append(a);
  } else meta.append(el('span', source));
  card.append(meta);
  const text = s.codeDescription ?? s.content;
  if (text) card.append(markdown(text, url ?? undefined));
  for (const c of s.codeList ?? []) card.append(codeBlock(c));
  return card;
}

function showAnswer(body, resultsId, statusId, headers) {
  const snippets = [...body.codeSnippets, ...body.infoSnippets];
  const reason = headers.get('x-stacks-search-reason');
  setStatus(statusId, `${snippets.length} snippet${snippets.length === 1 ? '' : 's'}${reason ? ` (${reason})` : ''}`);
  $(resultsId).replaceChildren(...snippets.map(snippetCard));
}

$('search').addEventListener('submit', async (event) => {
  event.preventDefault();
  const params = new URLSearchParams({ query: $('query').value, type: 'json' });
  if ($('library').value.trim()) params.set('library', $('library').value.trim());
  if ($('version').value.trim()) params.set('version', $('version').value.trim());
  setStatus('status', 'Searching…');
  $('results').replaceChildren();
  try {
    const { body, headers } = await api(`/api/v3/search?${params}`);
    showAnswer(body, 'results', 'status', headers);
  } catch (err) {
    setStatus('status', err.message, true);
  }
});

let libraries = [];

async function loadLibraries() {
  const tbody = $('libraries').querySelector('tbody');
  try {
    libraries = (await api('/api/libraries')).body.libraries;
    tbody.replaceChildren(
      ...libraries.map((l) => {
        const tr = el('tr');
        const link = el('a', l.id);
        link.href = `#/library${l.id.split('/').map(encodeURIComponent).join('/')}`;
        const first = el('td');
        first.append(link);
        tr.append(first);
        for (const v of [l.title, String(l.totalSnippets), l.versions.join(', '), l.lastUpdateDate.slice(0, 10)]) tr.append(el('td', v));
        tr.addEventListener('click', (e) => {
          if (e.target !== link) location.hash = link.getAttribute('href');
        });
        return tr;
      }),
    );
  } catch (err) {
    tbody.replaceChildren();
    setStatus('status', `Libraries: ${err.message}`, true);
  }
  route();
}

const PAGES = ['home', 'library-page', 'signin-page', 'setup-page', 'keys-page'];

function show(page) {
  for (const p of PAGES) $(p).hidden = p !== page;
}

/** `#/library/owner/repo`, `#/signin`, `#/setup/<token>`, `#/keys`; anything else the search page. */
function route() {
  const hash = location.hash;
  if (hash.startsWith('#signin-error=')) {
    show('signin-page');
    return setStatus('signin-status', decodeURIComponent(hash.slice('#signin-error='.length)), true);
  }
  if (hash === '#/signin') return show('signin-page');
  if (hash.startsWith('#/setup/')) return show('setup-page');
  if (hash === '#/keys') {
    show('keys-page');
    return loadKeys();
  }
  const id = hash.startsWith('#/library/') ? decodeURIComponent(hash.slice('#/library'.length)) : null;
  const lib = id ? libraries.find((l) => l.id === id) : null;
  show(id ? 'library-page' : 'home');
  if (!id) return;
  $('ask-results').replaceChildren();
  setStatus('ask-status', '');
  $('library-title').textContent = lib ? `${lib.title} (${lib.id})` : id;
  $('library-description').textContent = lib ? lib.description : 'No such library, or it is not visible with this key.';
  const facts = lib
    ? [['Snippets', lib.totalSnippets.toLocaleString()], ['Tokens', lib.totalTokens.toLocaleString()], ['Versions', lib.versions.length ? lib.versions.join(', ') : 'current only'], ['Source', lib.source || '—'], ['Updated', lib.lastUpdateDate.slice(0, 10)]]
    : [];
  $('library-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', k), el('dd', v)]));
  $('ask').hidden = !lib;
  if (lib) $('ask-query').focus();
}

$('ask').addEventListener('submit', async (event) => {
  event.preventDefault();
  const id = decodeURIComponent(location.hash.slice('#/library'.length));
  setStatus('ask-status', 'Searching…');
  $('ask-results').replaceChildren();
  try {
    const params = new URLSearchParams({ libraryId: id, query: $('ask-query').value, type: 'json' });
    const { body, headers } = await api(`/api/v2/context?${params}`);
    showAnswer(body, 'ask-results', 'ask-status', headers);
  } catch (err) {
    setStatus('ask-status', err.message, true);
  }
});

window.addEventListener('hashchange', route);
// "/" focuses the question, as on most search pages (not while typing in a field).
document.addEventListener('keydown', (e) => {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || ['INPUT', 'TEXTAREA'].includes(document.activeElement?.tagName)) return;
  e.preventDefault();
  (location.hash.startsWith('#/library/') ? $('ask-query') : $('query')).focus();
});

function showAccount() {
  const u = session.user;
  $('who').textContent = u ? `${u.username} (${u.role}, ${u.teamspace})` : '';
  $('nav-keys').hidden = !u;
  $('signout').hidden = !u;
  $('nav-signin').hidden = !!u;
  $('sso').hidden = !session.sso;
}

async function loadSession() {
  try {
    session = (await api('/api/session')).body;
  } catch {
    session = { user: null, csrfToken: null, sso: false };
  }
  showAccount();
}

$('signin').addEventListener('submit', async (event) => {
  event.preventDefault();
  setStatus('signin-status', 'Signing in…');
  try {
    await api('/api/session', { method: 'POST', json: { username: $('signin-user').value, password: $('signin-password').value } });
    $('signin-password').value = '';
    await loadSession();
    location.hash = '#/';
    loadLibraries();
  } catch (err) {
    setStatus('signin-status', err.message, true);
  }
});

$('setup').addEventListener('submit', async (event) => {
  event.preventDefault();
  setStatus('setup-status', 'Creating…');
  try {
    const token = location.hash.slice('#/setup/'.length);
    await api('/api/setup', { method: 'POST', json: { token, username: $('setup-user').value, password: $('setup-password').value } });
    await loadSession();
    location.hash = '#/keys';
  } catch (err) {
    setStatus('setup-status', err.message, true);
  }
});

$('signout').addEventListener('click', async () => {
  await api('/api/session', { method: 'DELETE' }).catch(() => {});
  await loadSession();
  location.hash = '#/';
  loadLibraries();
});

async function loadKeys() {
  const tbody = $('keys').querySelector('tbody');
  try {
    const { keys } = (await api('/api/v2/keys')).body;
    const mine = session.user ? keys.filter((k) => k.memberId === session.user.memberId) : keys;
    tbody.replaceChildren(
      ...mine.map((k) => {
        const tr = el('tr');
        for (const v of [k.name, `${k.prefix}…`, k.scope, k.createdAt.slice(0, 10), k.lastUsedAt ? k.lastUsedAt.slice(0, 10) : '—']) tr.append(el('td', v));
        const cell = el('td');
        if (!k.revokedAt) {
          const revoke = el('button', 'Revoke', 'copy');
          revoke.type = 'button';
          revoke.addEventListener('click', async () => {
            await api(`/api/v2/keys/${k.id}`, { method: 'DELETE' }).catch((err) => setStatus('keys-status', err.message, true));
            loadKeys();
          });
          cell.append(revoke);
        } else cell.append('revoked');
        tr.append(cell);
        return tr;
      }),
    );
  } catch (err) {
    tbody.replaceChildren();
    setStatus('keys-status', err.message, true);
  }
}

$('key-create').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const { body } = await api('/api/v2/keys', { method: 'POST', json: { name: $('key-name').value, scope: $('key-scope').value } });
    $('new-key-value').textContent = body.key;
    $('new-key').hidden = false;
    setStatus('keys-status', `Created ${body.name}.`);
    $('key-name').value = '';
    loadKeys();
  } catch (err) {
    setStatus('keys-status', err.message, true);
  }
});
$('new-key-copy').addEventListener('click', () => copy($('new-key-value').textContent, $('new-key-copy')));

loadSession().then(loadLibraries);
