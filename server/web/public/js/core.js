// Shared by every page of the console: the API client (key or session), DOM helpers, formatting.
export const $ = (id) => document.getElementById(id);

export function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (className) e.className = className;
  return e;
}

export function setStatus(id, text, isError = false) {
  $(id).textContent = text;
  $(id).className = isError ? 'error' : '';
}

/** The signed-in user, the session's CSRF token and whether SSO is offered (GET /api/session). */
export const session = { user: null, csrfToken: null, sso: false };

const keyInput = $('key');
keyInput.value = localStorage.getItem('stacks.key') ?? '';

/** The API key kept in this browser, or ''. */
export const apiKey = () => keyInput.value.trim();

/** Request headers: the key when one is set, else the session's CSRF token on changes. */
export function authHeaders(method = 'GET') {
  const key = apiKey();
  if (key) return { authorization: `Bearer ${key}` };
  return method !== 'GET' && session.csrfToken ? { 'x-csrf-token': session.csrfToken } : {};
}

/** Calls the API; `json` is sent as a JSON body. Throws an Error with the answer's message. */
export async function api(path, options = {}) {
  const method = options.method ?? 'GET';
  const headers = authHeaders(method);
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: options.json === undefined ? options.body : JSON.stringify(options.json) });
  const body = res.status === 204 ? {} : await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.message || `HTTP ${res.status}`);
    err.status = res.status;
    throw err;
  }
  return { body, headers: res.headers };
}

export async function copy(text, button) {
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

export function copyButton(text) {
  const b = el('button', 'Copy', 'copy');
  b.type = 'button';
  b.addEventListener('click', () => copy(typeof text === 'function' ? text() : text, b));
  return b;
}

/** A small button that runs `action` and reports a failure in the status line `statusId`. */
export function actionButton(label, statusId, action) {
  const b = el('button', label, 'small');
  b.type = 'button';
  b.addEventListener('click', async () => {
    b.disabled = true;
    try {
      await action();
    } catch (err) {
      setStatus(statusId, err.message, true);
    } finally {
      b.disabled = false;
    }
  });
  return b;
}

export function row(cells) {
  const tr = el('tr');
  for (const c of cells) {
    const td = el('td');
    if (c instanceof Node) td.append(c);
    else td.textContent = c ?? '—';
    tr.append(td);
  }
  return tr;
}

export const day = (iso) => (iso ? iso.slice(0, 10) : '—');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n) => String(n).padStart(2, '0');

/**
 * A moment in the browser's time zone, short enough for a table cell: "28 Nov 18:39" this year,
 * "28 Nov 2024" before. Joined by no-break spaces, so a narrow column never wraps it.
 */
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const date = `${d.getDate()}\u00a0${MONTHS[d.getMonth()]}`;
  return d.getFullYear() === new Date().getFullYear() ? `${date}\u00a0${pad(d.getHours())}:${pad(d.getMinutes())}` : `${date}\u00a0${d.getFullYear()}`;
}

/** A table cell's date: compact text, the exact moment on hover. */
export function when(iso) {
  if (!iso) return el('span', '—');
  const t = el('time', time(iso));
  t.dateTime = iso;
  t.title = new Date(iso).toLocaleString();
  return t;
}

/** A duration in words a person reads at a glance: "4 s", "2 min 5 s", "1 h 3 min". */
export function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}\u00a0s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}\u00a0min${s % 60 ? `\u00a0${s % 60}\u00a0s` : ''}`;
  return `${Math.floor(m / 60)}\u00a0h${m % 60 ? `\u00a0${m % 60}\u00a0min` : ''}`;
}

/** Fills a table's body with `rows`, or with one row saying `empty` when there are none. */
export function fillRows(tableId, rows, empty) {
  const body = $(tableId).querySelector('tbody');
  if (rows.length) return body.replaceChildren(...rows);
  const td = el('td', empty, 'empty');
  td.colSpan = $(tableId).querySelectorAll('thead th').length || 1;
  const tr = el('tr');
  tr.append(td);
  body.replaceChildren(tr);
}

export function bytes(n) {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

/** Whether the signed-in user (or key) may administer: the console shows admin pages to owners and admins. */
export const isAdmin = () => !!apiKey() || ['owner', 'admin'].includes(session.user?.role);
