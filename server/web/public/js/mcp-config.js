// Ready-to-paste MCP configurations on the public address: remote Streamable HTTP with the key as
// a bearer header wherever the client supports it (see docs/mcp.md); the stdio command only for
// the Stacks server itself, where `stacks` is installed.
import { $ } from './core.js';
import { loadSettings } from './settings.js';
import { secretBox } from './secret-box.js';

/** Each client's configuration for `base` (no trailing slash) and `key`. */
export function mcpConfigs(base, key) {
  const url = `${base}/mcp`;
  const auth = `Bearer ${key}`;
  const headers = { Authorization: auth };
  const json = (v) => JSON.stringify(v, null, 2);
  // mcp-remote refuses plain http to another machine unless told that the network is trusted.
  const local = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:|$)/.test(base);
  const allowHttp = base.startsWith('http:') && !local ? ['--allow-http'] : [];
  return [
    ['Claude Code (run in a terminal)', `claude mcp add --transport http stacks ${url} --header "Authorization: ${auth}"`],
    ['Cursor (~/.cursor/mcp.json)', json({ mcpServers: { stacks: { url, headers } } })],
    ['VS Code (.vscode/mcp.json)', json({ servers: { stacks: { type: 'http', url, headers } } })],
    ['Windsurf (~/.codeium/windsurf/mcp_config.json)', json({ mcpServers: { stacks: { serverUrl: url, headers } } })],
    [
      'Claude Desktop (claude_desktop_config.json; through mcp-remote, which needs Node.js and npm on this machine)',
      json({
        mcpServers: {
          stacks: { command: 'npx', args: ['-y', 'mcp-remote', url, '--header', 'Authorization:${STACKS_AUTH}', ...allowHttp], env: { STACKS_AUTH: auth } },
        },
      }),
    ],
    ['Only on the Stacks server itself (stdio, in the installation, with its DATA_DIR)', `stacks mcp --api-key ${key}`],
  ];
}

/** Shows the configurations for `key` in #mcp-config, with a notice when no public address is set. */
export async function showMcpConfig(key) {
  const settings = await loadSettings();
  const base = settings.publicUrl ?? location.origin;
  const notice = $('mcp-notice');
  notice.hidden = !!settings.publicUrl;
  if (!settings.publicUrl) {
    notice.textContent =
      `No public address is set, so these use this browser's address (${location.origin}), which other machines may not reach. ` +
      "The instance's owner sets it in Admin → Public address, or the operator with STACKS_PUBLIC_URL.";
  }
  $('mcp-config').replaceChildren(...mcpConfigs(base, key).map(([name, text]) => secretBox(name, text)));
}
