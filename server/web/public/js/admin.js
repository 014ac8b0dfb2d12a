// Administration of the teamspace (owners and admins): members and roles, rules, the policy,
// usage charts, the license, the instance's health, and the audit log.
import { $, actionButton, api, bytes, day, el, row, setStatus, time } from './core.js';
import { secretBox } from './secret-box.js';

const ROLES = ['member', 'admin', 'owner'];

async function members() {
  const { members: list } = (await api('/api/v2/members')).body;
  $('members').querySelector('tbody').replaceChildren(
    ...list.map((m) => {
      const role = el('select');
      role.setAttribute('aria-label', `Role of ${m.name}`);
      for (const r of ROLES) role.append(Object.assign(el('option', r), { value: r, selected: r === m.role }));
      role.addEventListener('change', () =>
        api(`/api/v2/members/${m.id}`, { method: 'PATCH', json: { role: role.value } }).then(
          () => setStatus('admin-status', `${m.name} is now ${role.value}.`),
          (err) => setStatus('admin-status', err.message, true),
        ),
      );
      return row([m.name, m.email ?? '—', role, String(m.keys), day(m.createdAt), actionButton('Remove', 'admin-status', async () => {
        if (!confirm(`Remove ${m.name} and revoke their keys?`)) return;
        await api(`/api/v2/members/${m.id}`, { method: 'DELETE' });
        await members();
      })]);
    }),
  );
}

async function rules() {
  const { rules: list } = (await api('/api/v2/rules')).body;
  $('rules').querySelector('tbody').replaceChildren(
    ...list.map((r) => row([r.kind, r.libraryId ?? '—', r.text, actionButton('Remove', 'admin-status', async () => {
      await api(`/api/v2/rules/${r.id}`, { method: 'DELETE' });
      await rules();
    })])),
  );
}

/** Bars of daily requests as inline SVG (no chart library needed for this). */
function chart(title, daily) {
  const w = 600;
  const h = 120;
  const max = Math.max(1, ...daily.map((d) => d.requests));
  const bw = w / daily.length;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${w} ${h + 16}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${title}: ${daily.reduce((n, d) => n + d.requests, 0)} requests in ${daily.length} days`);
  daily.forEach((d, i) => {
    const bh = (d.requests / max) * h;
    const rect = document.createElementNS(ns, 'rect');
    Object.entries({ x: i * bw + 1, y: h - bh, width: Math.max(1, bw - 2), height: bh, class: 'bar' }).forEach(([k, v]) => rect.setAttribute(k, String(v)));
    const tip = document.createElementNS(ns, 'title');
    tip.textContent = `${d.date}: ${d.requests}`;
    rect.append(tip);
    svg.append(rect);
  });
  const label = document.createElementNS(ns, 'text');
  label.setAttribute('x', '0');
  label.setAttribute('y', String(h + 14));
  label.textContent = `${daily[0]?.date ?? ''} … ${daily.at(-1)?.date ?? ''}, max ${max}/day`;
  svg.append(label);
  const fig = el('figure', undefined, 'chart');
  fig.append(el('figcaption', title), svg);
  return fig;
}

async function usage() {
  const u = (await api('/api/v2/usage?days=30')).body;
  $('usage').replaceChildren(
    el('p', `${u.teamspace.name}: ${u.teamspace.requests.toLocaleString()} requests this month (plan ${u.plan}, resets ${day(u.resetsAt)}).`),
    chart(`Teamspace ${u.teamspace.name}`, u.teamspace.daily),
    ...(u.teamspace.byMember ?? []).filter((m) => m.requests > 0).map((m) => chart(`${m.name} (${m.requests})`, m.daily)),
  );
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
    ['Version', s.version], ['Up for', `${Math.round(s.uptimeSeconds / 60)} min`],
    ...(mine ? [['Figures of', `teamspace ${s.teamspace}`]] : [['Database', `${bytes(s.database.bytes)} (+ ${bytes(s.database.walBytes)} WAL, usage ${bytes(s.database.usageBytes)})`]]),
    ['Libraries', mine ? `${s.libraries.toLocaleString()} readable, ${s.ownedLibraries.toLocaleString()} its own` : s.libraries.toLocaleString()],
    ['Versions served', s.versions.toLocaleString()], ['Snippets', s.snippets.toLocaleString()],
    ['Queue', Object.entries(s.queue).map(([k, v]) => `${k} ${v}`).join(', ')], ['Embedder', s.embedder ? `${s.embedder.id} (${s.embedder.dims} dims)` : 'none (lexical search)'],
  ];
  $('system').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', k), el('dd', v)]));
}

async function audit() {
  const { entries } = (await api('/api/audit?limit=50')).body;
  $('audit').querySelector('tbody').replaceChildren(
    ...entries.map((e) => row([time(e.at), e.actor.name ?? e.actor.kind, e.action, e.target ?? '—', e.outcome + (e.count > 1 ? ` ×${e.count}` : ''), e.sourceIp ?? '—'])),
  );
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
}

$('member-add').addEventListener('submit', async (event) => {
  event.preventDefault();
  try {
    const { body } = await api('/api/v2/members', { method: 'POST', json: { name: $('member-name').value, role: $('member-role').value } });
    setStatus('admin-status', `Added ${body.member.name}.`);
    // The key is shown once, in a box with a copy button (not in the status line).
    $('member-key').replaceChildren(...(body.key ? [secretBox(`${body.member.name}'s first key, shown only now`, body.key.key, 'Give it to them; it acts with their role. For an assistant, prefer a key with the read scope (My keys).')] : []));
    $('member-name').value = '';
    await members();
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
  } catch (err) {
    setStatus('admin-status', err.message, true);
  }
});

$('policy-save').addEventListener('click', async () => {
  try {
    const policy = JSON.parse($('policy-json').value);
    $('policy-json').value = JSON.stringify((await api('/api/v2/policies', { method: 'PUT', json: policy })).body, null, 2);
    setStatus('admin-status', 'Policy saved.');
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
