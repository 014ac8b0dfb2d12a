import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import Provider from 'oidc-provider';
import { startTestServer } from './helpers/server.ts';
import { listen } from './helpers/fixtures.ts';
import { launchBrowser } from './helpers/browser.ts';
import { loadConfig } from '../server/config.ts';

/** Who the test identity provider knows, and their groups. */
const GROUPS: Record<string, string[]> = { alice: ['devs'], root: ['platform', 'devs'], mallory: ['contractors'] };

/**
 * A real OpenID Connect provider (oidc-provider) on 127.0.0.1 with its development login pages.
 * It listens first, so Stacks can be configured with its address; the provider itself is built
 * once Stacks' callback address is known.
 */
async function identityProvider() {
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = await listen(http.createServer((req, res) => handler(req, res)));
  return {
    issuer: server.url,
    close: () => server.close(),
    start(callback: string) {
      const provider = new Provider(server.url, {
        clients: [
          {
            client_id: 'stacks',
            client_secret: 'test-secret-not-real',
            redirect_uris: [callback],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'client_secret_post',
          },
        ],
        findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, preferred_username: id, groups: GROUPS[id] ?? [] }) }),
        claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
        scopes: ['openid', 'profile', 'groups'],
        pkce: { required: () => true },
        cookies: { keys: ['test-cookie-key'] },
        ttl: { Session: 600, Grant: 600, AccessToken: 600, IdToken: 600, Interaction: 600, AuthorizationCode: 60 },
        features: { devInteractions: { enabled: true } },
      });
      handler = provider.callback();
    },
  };
}

test('SSO: sign in through a real OpenID Connect provider in Chromium; provisioned with the mapped role, refused when unmapped', async (t) => {
  const idp = await identityProvider();
  t.after(() => idp.close());
  const s = await startTestServer({
    config: {
      oidcIssuer: idp.issuer,
      oidcClientId: 'stacks',
      oidcClientSecret: 'test-secret-not-real',
      oidcAllowHttp: true,
      oidcScopes: 'openid profile groups',
      oidcRoleMap: 'platform=default:admin,devs=default:member',
    },
  });
  t.after(() => s.close());
  idp.start(`${s.url.replace('localhost', '127.0.0.1')}/api/auth/oidc/callback`);
  const browser = await launchBrowser(s.services.config.chromiumPath);
  t.after(() => browser.close());

  const signIn = async (login: string) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${s.url}/#/signin`);
    await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.origin === new URL(s.url).origin);
    return { page, context };
  };

  const alice = await signIn('alice');
  await alice.page.locator('#who', { hasText: 'alice (member, default)' }).waitFor();
  const root = await signIn('root');
  await root.page.locator('#who', { hasText: 'root (admin, default)' }).waitFor();
  // A signed-in user makes their own key in the console.
  await alice.page.getByRole('link', { name: 'My keys' }).click();
  await alice.page.locator('#keys-page').getByLabel('Name', { exact: true }).fill('assistant');
  await alice.page.getByRole('button', { name: 'Create key' }).click();
  // The key appears when the request returns, not at the click: wait for it (a timeout fails the test).
  await alice.page.locator('#new-key-value', { hasText: /^stk_/ }).waitFor();

  const mallory = await signIn('mallory');
  await mallory.page.locator('#signin-status', { hasText: 'none of their groups may use Stacks' }).waitFor();
  assert.equal(await mallory.page.locator('#who').textContent(), '');
  for (const c of [alice, root, mallory]) await c.context.close();

  const users = (await s.services.users.list()).map((u) => [u.username, u.role, u.kind]);
  assert.deepEqual(users, [
    ['alice', 'member', 'sso'],
    ['root', 'admin', 'sso'],
  ]);
  const signIns = (await (await s.api('/api/audit?action=signIn')).json()) as { entries: { target: string; outcome: string }[] };
  assert.deepEqual(signIns.entries.map((e) => [e.target, e.outcome]).reverse(), [
    ['alice', 'ok'],
    ['root', 'ok'],
    ['mallory', 'refused'],
  ]);
});

test('SSO: the configuration is validated at start', () => {
  const env = {};
  assert.throws(() => loadConfig({ oidcIssuer: 'https://idp.example', oidcClientId: 'x' }, env), /STACKS_OIDC_ROLE_MAP|oidcRoleMap/);
  assert.throws(() => loadConfig({ oidcIssuer: 'https://idp.example', oidcClientId: 'x', oidcRoleMap: 'devs=default' }, env), /group=teamspace:role/);
  assert.throws(() => loadConfig({ oidcIssuer: 'http://idp.example', oidcClientId: 'x', oidcRoleMap: 'devs=default:member' }, env), /STACKS_OIDC_ALLOW_HTTP/);
  const ok = loadConfig({ oidcIssuer: 'https://idp.example', oidcClientId: 'x', oidcRoleMap: 'devs=default:member, *=guests:member' }, env);
  assert.deepEqual(ok.oidcRoleMap, [
    { group: 'devs', teamspace: 'default', role: 'member' },
    { group: '*', teamspace: 'guests', role: 'member' },
  ]);
});
