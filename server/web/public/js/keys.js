// My API keys: create (shown once), list, revoke; and the MCP configuration to paste into an editor or assistant.
import { $, actionButton, api, copyButton, day, row, session, setStatus } from './core.js';
import { showMcpConfig } from './mcp-config.js';

export async function loadKeys() {
  try {
    const { keys } = (await api('/api/v2/keys')).body;
    const mine = session.user ? keys.filter((k) => k.memberId === session.user.memberId) : keys;
    $('keys')
      .querySelector('tbody')
      .replaceChildren(
        ...mine.map((k) =>
          row([
            k.name,
            `${k.prefix}…`,
            k.scope,
            day(k.createdAt),
            day(k.lastUsedAt),
            k.revokedAt
              ? `revoked ${day(k.revokedAt)}`
              : actionButton('Revoke', 'keys-status', async () => {
                  if (!confirm(`Revoke the key "${k.name}" (${k.prefix}…)? Assistants and scripts using it stop working at once.`)) return;
                  await api(`/api/v2/keys/${k.id}`, { method: 'DELETE' });
                  await loadKeys();
                }),
          ]),
        ),
      );
  } catch (err) {
    $('keys').querySelector('tbody').replaceChildren();
    setStatus('keys-status', err.message, true);
  }
  await showMcpConfig($('new-key-value').textContent || '<your key>');
}

$('key-create').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const { body } = await api('/api/v2/keys', { method: 'POST', json: { name: $('key-name').value, scope: $('key-scope').value } });
    $('new-key-value').textContent = body.key;
    $('new-key').hidden = false;
    setStatus('keys-status', `Created ${body.name}. Copy it now: it is not shown again.`);
    $('key-name').value = '';
    await loadKeys();
  } catch (err) {
    setStatus('keys-status', err.message, true);
  }
});
$('new-key-copy').replaceWith(
  Object.assign(
    copyButton(() => $('new-key-value').textContent),
    { id: 'new-key-copy' },
  ),
);
