// Jobs: live progress pushed by the server (GET /api/jobs/events, server-sent events) when the
// console is signed in; polled every second with a key (EventSource cannot send one). Cancel, retry.
import { $, actionButton, api, apiKey, el, isAdmin, setStatus, time } from './core.js';

const jobs = new Map();
let source = null;
let timer = null;

function progressText(j) {
  const p = j.progress ?? {};
  if (typeof p.total === 'number' && p.total > 0) return `${p.stored ?? p.snippets ?? p.done ?? 0} / ${p.total}`;
  const parts = Object.entries(p).filter(([, v]) => typeof v === 'number').slice(0, 3).map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(2)}`);
  return parts.join(', ') || '—';
}

function render() {
  const list = [...jobs.values()].sort((a, b) => b.id - a.id).slice(0, 100);
  $('jobs').querySelector('tbody').replaceChildren(
    ...list.map((j) => {
      const tr = el('tr');
      tr.dataset.state = j.state;
      for (const v of [`#${j.id}`, j.kind, j.libraryId ?? '—', j.state, progressText(j), time(j.createdAt), j.error ?? '']) tr.append(el('td', v));
      const actions = el('td');
      if (isAdmin() && (j.state === 'queued' || j.state === 'running')) actions.append(actionButton('Cancel', 'jobs-status', () => api(`/api/jobs/${j.id}/cancel`, { method: 'POST' }).then(({ body }) => update(body))));
      if (isAdmin() && (j.state === 'failed' || j.state === 'cancelled') && ['crawl', 'version-fetch', 'git'].includes(j.kind)) {
        actions.append(actionButton('Retry', 'jobs-status', () => api(`/api/jobs/${j.id}/retry`, { method: 'POST' }).then(({ body }) => update(body))));
      }
      tr.append(actions);
      return tr;
    }),
  );
}

function update(job) {
  jobs.set(job.id, job);
  render();
}

export function startJobs() {
  stopJobs();
  setStatus('jobs-status', '');
  if (!apiKey()) {
    source = new EventSource('/api/jobs/events');
    source.addEventListener('job', (e) => update(JSON.parse(e.data)));
    source.addEventListener('open', () => setStatus('jobs-status', 'Live.'));
    source.addEventListener('error', () => setStatus('jobs-status', 'Reconnecting…'));
    return;
  }
  const poll = async () => {
    try {
      for (const j of (await api('/api/jobs?limit=100')).body.jobs) jobs.set(j.id, j);
      render();
    } catch (err) {
      setStatus('jobs-status', err.message, true);
    }
  };
  poll();
  timer = setInterval(poll, 1000);
}

export function stopJobs() {
  source?.close();
  source = null;
  clearInterval(timer);
}
