// Administration of the teamspace (owners and admins): members and roles, rules, the policy,
// usage charts, the license, the instance's health, and the audit log (read again every few
// seconds while the page is open, and after each change made here).
import { $, actionButton, api, bytes, day, el, fillRows, row, setStatus, when } from './core.js';
import { secretBox } from './secret-box.js';
import { clearCharts, usageChart } from './usage-chart.js';

const ROLES = ['member', 'admin', 'owner'];

/** Member names by id, for the audit log (whose targets name a member by `#id`). */
const memberNames = new Map();

async function members() {
  const { members: list } = (await api('/api/v2/members')).body;
  for (const m of list) memberNames.set(m.id, m.name);
  fillRows(
    'members',
    list.map((m) => {
      const role = el('select');
      role.setAttribute('aria-label', `Role of ${m.name}`);
      for (const r of ROLES) role.append(Object.assign(el('option', r), { value: r, selected: r === m.role }));
      role.addEventListener('change', () =>
        api(`/api/v2/members/${m.id}`, { method: 'PATCH', json: { role: role.value } }).then(
          () => (setStatus('admin-status', `${m.name} is now ${role.value}.`), audit()),
          (err) => setStatus('admin-status', err.message, true),
        ),
      );
      const since = el('span');
      since.append(when(m.createdAt));
      return row([
        m.name,
        m.email ?? '—',
        role,
        String(m.keys),
        since,
        actionButton('Remove', 'admin-status', async () => {
          if (!confirm(`Remove ${m.name} from the teamspace and revoke their ${m.keys === 1 ? 'key' : `${m.keys} keys`}? This cannot be undone.`)) return;
          await api(`/api/v2/members/${m.id}`, { method: 'DELETE' });
          setStatus('admin-status', `${m.name} was removed.`);
          await members();
          await audit();
        }),
      ]);
    }),
    'No members yet.',
  );
}

async function rules() {
  const { rules: list } = (await api('/api/v2/rules')).body;
  fillRows(
    'rules',
    list.map((r) =>
      row([
        r.kind,
        r.libraryId ?? '—',
        r.text,
        actionButton('Remove', 'admin-status', async () => {
          if (!confirm(`Remove the rule "${r.text.slice(0, 80)}"?`)) return;
          await api(`/api/v2/rules/${r.id}`, { method: 'DELETE' });
          await rules();
          await audit();
        }),
      ]),
    ),
    'No rules: answers come without added guidance.',
  );
}

async function usage() {
  const u = (await api('/api/v2/usage?days=30')).body;
  clearCharts();
  const charts = [
    usageChart(`Teamspace ${u.teamspace.name}`, u.teamspace.daily),
    ...(u.teamspace.byMember ?? []).filter((m) => m.requests > 0).map((m) => usageChart(m.name, m.daily)),
  ];
  $('usage').replaceChildren(
    el('p', `${u.teamspace.name}: ${u.teamspace.requests.toLocaleString()} requests this month (plan ${u.plan}, resets ${day(u.resetsAt)}).`),
    ...charts.map((c) => c.fig),
  );
  for (const c of charts) c.draw();
}

async function license() {
  const l = (await api('/api/license')).body;
  const expires = l.license?.expiresAt ? new Date(l.license.expiresAt) : null;
  const soon = expires && expires.getTime() - Date.now() < 30 * 86_400_000;
  $('license-state').textContent = `${l.state}: ${l.message}${expires ? ` Expires ${day(l.license.expiresAt)}.` : ''}`;
  $('license-state').className = l.state !== 'valid' || soon ? 'error' : '';
}

async function system() {
  const s = (await api('/api/system')).body;
  // The instance's owner gets the instance's totals; other owners and admins their teamspace's figures.
  const mine = s.scope === 'teamspace';
  const facts = [
    ['Version', s.version],
    ['Up for', `${Math.round(s.uptimeSeconds / 60)} min`],
    ...(mine
      ? [['Figures of', `teamspace ${s.teamspace}`]]
      : [['Database', `${bytes(s.database.bytes)} (+ ${bytes(s.database.walBytes)} WAL, usage ${bytes(s.database.usageBytes)})`]]),
    ['Libraries', mine ? `${s.libraries.toLocaleString()} readable, ${s.ownedLibraries.toLocaleString()} its own` : s.libraries.toLocaleString()],
    ['Versions served', s.versions.toLocaleString()],
    ['Snippets', s.snippets.toLocaleString()],
    [
      'Queue',
      Object.entries(s.queue)
        .map(([k, v]) => `${k} ${v}`)
        .join(', '),
    ],
    ['Embedder', s.embedder ? `${s.embedder.id} (${s.embedder.dims} dims)` : 'none (lexical search)'],
  ];
  $('system').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', k), el('dd', v)]));
}

/** Who or what an entry acted on; a member by name rather than by `#id` when the page knows it. */
function targetText(e) {
  const id = /^#(\d+)$/.exec(e.target ?? '')?.[1];
  if (id && e.action.startsWith('member')) return memberNames.has(Number(id)) ? memberNames.get(Number(id)) : `member #${id} (removed)`;
  if (id && e.action.startsWith('key')) return `key #${id}`;
  return e.target ?? '—';
}

async function audit() {
  const { entries } = (await api('/api/audit?limit=50')).body;
  fillRows(
    'audit',
    entries.map((e) => {
      const at = el('span');
      at.append(when(e.at));
      const who = e.actor.name ?? (e.actor.kind === 'anonymous' ? 'anonymous' : e.actor.kind === 'operator' ? 'the server operator (CLI)' : e.actor.kind);
      return row([at, who, e.action, targetText(e), e.outcome + (e.count > 1 ? ` ×${e.count}` : ''), e.sourceIp ?? '—']);
    }),
    'Nothing recorded yet.',
  );
}

/** The audit log is read again this often while the page is open. */
const AUDIT_REFRESH_MS = 5_000;
let auditTimer = null;

export function stopAdmin() {
  clearInterval(auditTimer);
  auditTimer = null;
}

export async function loadAdmin() {
  setStatus('admin-status', '');
  $('policy-json').value = JSON.stringify((await api('/api/v2/policies').catch(() => ({ body: {} }))).body, null, 2);
  for (const part of [members, rules, usage, license, system, audit]) {
    try {
      await part();
    } catch (err) {
      setStatus('admin-status', err.status === 403 ? 'These pages are for owners and admins of the teamspace.' : err.message, true);
      if (err.status === 403) return;
    }
  }
  stopAdmin();
  auditTimer = setInterval(() => audit().catch(() => {}), AUDIT_REFRESH_MS);
}

$('member-add').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const { body } = await api('/api/v2/members', { method: 'POST', json: { name: $('member-name').value, role: $('member-role').value } });
    setStatus('admin-status', `Added ${body.member.name}.`);
    // The key is shown once, in a box with a copy button (not in the status line).
    $('member-key').replaceChildren(
      ...(body.key
        ? [
            secretBox(
              `${body.member.name}'s first key, shown only now`,
              body.key.key,
              'Give it to them; it acts with their role. For an assistant, prefer a key with the read scope (My keys).',
            ),
          ]
        : []),
    );
    $('member-name').value = '';
    await members();
    await audit();
  } catch (err) {
    setStatus('admin-status', err.message, true);
  }
});

$('rule-add').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const libraryId = $('rule-library').value.trim() || undefined;
    await api('/api/v2/rules', { method: 'POST', json: { kind: $('rule-kind').value, libraryId, text: $('rule-text').value } });
    $('rule-text').value = '';
    await rules();
    await audit();
  } catch (err) {
    setStatus('admin-status', err.message, true);
  }
});

$('policy-save').addEventListener('click', async () => {
  try {
    const policy = JSON.parse($('policy-json').value);
    $('policy-json').value = JSON.stringify((await api('/api/v2/policies', { method: 'PUT', json: policy })).body, null, 2);
    setStatus('admin-status', 'Policy saved.');
    await audit();
  } catch (err) {
    setStatus('admin-status', err.message, true);
  }
});

$('license-upload').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const text = await $('license-file').files[0].text();
    const { body } = await api('/api/license', { method: 'POST', json: { license: text } });
    setStatus('license-status', `License installed: ${body.message}`);
    await license();
  } catch (err) {
    // Said next to the Install button, and the state line says it was refused (not still "missing" as if nothing happened).
    setStatus('license-status', `Not installed: ${err.message}`, true);
    $('license-state').textContent = `refused: ${err.message}`;
    $('license-state').className = 'error';
  }
});
