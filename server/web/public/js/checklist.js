// The first-run checklist (GET /api/getting-started) on the home page and on Add: what an
// administrator still has to do, each item linking to where it is done. It is computed from what
// exists on the server, and disappears once everything is done.
import { $, api, el, isAdmin } from './core.js';

const ITEMS = {
  license: ['Install a license', '#/admin', 'import and crawl need one'],
  library: ['Add a first library', '#/add', 'import a bundle, crawl a site, index a repository'],
  key: ['Create a key for an assistant', '#/keys', 'and paste its MCP configuration'],
  invite: ['Invite a teammate', '#/admin', 'a one-time link to a console account'],
};

/** Fills the checklist box `id` (hidden for non-administrators, on errors, and when all is done). */
export async function showChecklist(id) {
  const box = $(id);
  if (!isAdmin()) {
    box.hidden = true;
    return;
  }
  let list;
  try {
    list = (await api('/api/getting-started')).body;
  } catch {
    box.hidden = true;
    return;
  }
  box.hidden = list.done;
  if (list.done) return box.replaceChildren();
  const left = list.items.filter((i) => !i.done).length;
  const ol = el('ol');
  for (const item of list.items) {
    const [label, href, hint] = ITEMS[item.id];
    const li = el('li', undefined, item.done ? 'done' : 'todo');
    li.dataset.item = item.id;
    const link = el('a', label);
    link.href = href;
    li.append(el('span', item.done ? '✓' : '○', 'mark'), link, el('small', item.done ? ` — ${item.detail}` : ` — ${hint}`));
    ol.append(li);
  }
  box.replaceChildren(el('h3', `Getting started: ${left} of ${list.items.length} left`), ol);
}
