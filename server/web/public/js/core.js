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
export const time = (iso) => (iso ? iso.replace('T', ' ').slice(0, 19) : '—');

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
