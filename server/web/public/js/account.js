// Who is using the console: the signed-in user (a session cookie) or a key kept in this browser.
import { $, api, apiKey, isAdmin, session, setStatus } from './core.js';

export async function loadSession() {
  try {
    Object.assign(session, (await api('/api/session')).body);
  } catch {
    Object.assign(session, { user: null, csrfToken: null, sso: false });
  }
  showAccount();
}

/** The header: the user, sign-in or sign-out, and the pages this user may open. */
export function showAccount() {
  const u = session.user;
  $('who').textContent = u ? `${u.username} (${u.role}, ${u.teamspace})` : apiKey() ? 'using the API key of this browser' : '';
  $('signout').hidden = !u;
  $('nav-signin').hidden = !!u;
  $('sso').hidden = !session.sso;
  const signedIn = !!u || !!apiKey();
  for (const id of ['nav-keys', 'nav-add', 'nav-jobs']) $(id).hidden = !signedIn;
  $('nav-admin').hidden = !isAdmin();
}

export function onAccountChange(then) {
  $('key').addEventListener('change', async () => {
    localStorage.setItem('stacks.key', apiKey());
    showAccount();
    then();
  });

  $('signin').addEventListener('submit', async (event) => {
    event.preventDefault();
    setStatus('signin-status', 'Signing in…');
    try {
      await api('/api/session', { method: 'POST', json: { username: $('signin-user').value, password: $('signin-password').value } });
      $('signin-password').value = '';
      setStatus('signin-status', '');
      await loadSession();
      location.hash = '#/';
      then();
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
      then();
    } catch (err) {
      setStatus('setup-status', err.message, true);
    }
  });

  $('signout').addEventListener('click', async () => {
    await api('/api/session', { method: 'DELETE' }).catch(() => {});
    await loadSession();
    location.hash = '#/';
    then();
  });
}
