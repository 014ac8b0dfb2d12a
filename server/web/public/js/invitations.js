// Invitations: on Admin, create one-time links to a console account and revoke them; the page a
// link opens (#/invite/<token>), where the invitee chooses a password and is signed in.
import { $, actionButton, api, day, row, session, setStatus } from './core.js';
import { secretBox } from './secret-box.js';
import { publicBase } from './settings.js';

export async function loadInvitations() {
  $('invite-sso-note').hidden = !session.sso;
  try {
    const { invitations } = (await api('/api/invitations')).body;
    $('invitations')
      .querySelector('tbody')
      .replaceChildren(
        ...invitations.map((i) =>
          row([
            i.username ?? 'chosen by them',
            i.email ?? '—',
            i.role,
            i.state,
            day(i.expiresAt),
            i.invitedBy ?? '—',
            i.state === 'open'
              ? actionButton('Revoke', 'invite-status', async () => {
                  if (!confirm('Revoke this invitation? Its link stops working.')) return;
                  await api(`/api/invitations/${i.id}`, { method: 'DELETE' });
                  await loadInvitations();
                })
              : '',
          ]),
        ),
      );
  } catch (err) {
    $('invitations').querySelector('tbody').replaceChildren();
    if (err.status !== 403) setStatus('invite-status', err.message, true);
  }
}

$('invite-create').addEventListener('submit', async (event) => {
  event.preventDefault();
  setStatus('invite-status', '');
  try {
    const json = { role: $('invite-role').value, days: Number($('invite-days').value) || 7 };
    if ($('invite-username').value.trim()) json.username = $('invite-username').value.trim();
    if ($('invite-email').value.trim()) json.email = $('invite-email').value.trim();
    const { body } = await api('/api/invitations', { method: 'POST', json });
    const link = body.url ?? `${await publicBase()}${body.path}`;
    $('invite-link').replaceChildren(
      secretBox(
        `Invitation link for ${body.username ?? 'a new account'} (${body.role}), shown only now`,
        link,
        `Send it to them yourself; it works once, until ${day(body.expiresAt)}.`,
      ),
    );
    $('invite-username').value = '';
    $('invite-email').value = '';
    await loadInvitations();
  } catch (err) {
    setStatus('invite-status', err.message, true);
  }
});

/** #/invite/<token>: what the invitation offers, or why its link no longer works. */
export async function showInvitePage() {
  const token = location.hash.slice('#/invite/'.length);
  $('invite-accept').hidden = true;
  $('invite-sso').hidden = true;
  setStatus('invite-page-status', '');
  try {
    const { body } = await api('/api/invitations/preview', { method: 'POST', json: { token } });
    $('invite-about').textContent =
      `You are invited to the teamspace ${body.teamspace} as ${body.role === 'member' ? 'a member' : `an ${body.role}`}. Choose ${body.username ? 'a password' : 'a user name and a password'}; the link works once, until ${day(body.expiresAt)}.`;
    $('invite-user-field').hidden = !!body.username;
    $('invite-user').required = !body.username;
    $('invite-user').value = body.username ?? '';
    $('invite-accept').hidden = false;
    $('invite-sso').hidden = !body.sso;
  } catch (err) {
    $('invite-about').textContent = '';
    setStatus('invite-page-status', err.message, true);
  }
}

export function onInviteAccepted(then) {
  $('invite-accept').addEventListener('submit', async (event) => {
    event.preventDefault();
    setStatus('invite-page-status', 'Creating your account…');
    try {
      const token = location.hash.slice('#/invite/'.length);
      const json = { token, password: $('invite-password').value };
      if (!$('invite-user-field').hidden) json.username = $('invite-user').value;
      await api('/api/invitations/accept', { method: 'POST', json });
      $('invite-password').value = '';
      setStatus('invite-page-status', '');
      await then();
    } catch (err) {
      setStatus('invite-page-status', err.message, true);
    }
  });
}
