// Admin → Public address: the instance's owner sets the address invitation links and MCP
// configurations use (STACKS_PUBLIC_URL on the server wins over it).
import { $, api, setStatus } from './core.js';
import { loadSettings } from './settings.js';

/** Admin → Public address: the instance's owner sets the address links and configurations use. */
export async function loadPublicUrl() {
  const s = await loadSettings(true);
  const state = $('public-url-state');
  if (s.source === 'env') state.textContent = `${s.publicUrl} (set by STACKS_PUBLIC_URL on the server, which wins over this setting).`;
  else if (s.source === 'console') state.textContent = `${s.publicUrl}: invitation links and MCP configurations use it.`;
  else
    state.textContent = `Not set: links and MCP configurations use the address of the browser that makes them (now ${location.origin}). Set the address developers reach this instance at.`;
  state.className = s.publicUrl ? '' : 'error';
  $('public-url').value = s.consoleValue ?? '';
  $('public-url').disabled = s.source === 'env';
  $('public-url-save').disabled = s.source === 'env';
}

$('public-url-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const value = $('public-url').value.trim();
    await api('/api/settings', { method: 'PATCH', json: { publicUrl: value || null } });
    setStatus('public-url-status', value ? 'Saved.' : 'Cleared.');
    await loadPublicUrl();
  } catch (err) {
    setStatus('public-url-status', err.message, true);
  }
});
