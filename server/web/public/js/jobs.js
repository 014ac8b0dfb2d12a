// Jobs: live progress pushed by the server (GET /api/jobs/events, server-sent events) when the
// console is signed in; polled every second with a key (EventSource cannot send one). Each row
// says what the job does in words (job-names.js), links to its library, shows a bar when its total
// is known and how long it ran; Cancel, and Retry only where the server says a retry can help.
import { actionButton, api, apiKey, duration, el, fillRows, isAdmin, setStatus, when } from './core.js';
import { libraries, libraryHref, loadLibraries } from './search.js';
import { jobProgress, jobTitle } from './job-names.js';

const jobs = new Map();
let source = null;
let timer = null;
let clock = null;

function titleCell(j, titles) {
  const td = el('td');
  const name = el('div', jobTitle(j, titles), 'job-title');
  const meta = el('small', `#${j.id} · ${j.kind}`);
  td.append(name, meta);
  if (j.libraryId && titles.has(j.libraryId)) {
    const a = el('a', j.libraryId);
    a.href = libraryHref(j.libraryId);
    meta.append(' · ', a);
  }
  return td;
}

function progressCell(j) {
  const td = el('td', undefined, 'progress');
  const { fraction, text } = jobProgress(j);
  if (fraction !== null && j.state !== 'failed' && j.state !== 'cancelled') {
    const bar = el('progress');
    bar.max = 1;
    bar.value = fraction;
    bar.setAttribute('aria-label', `${jobTitle(j, new Map())}: ${Math.round(fraction * 100)}%`);
    td.append(bar);
  }
  if (text) td.append(el('small', text));
  return td;
}

/** How long it ran (or has been running): started to finished, or to now. */
function took(j) {
  if (!j.startedAt) return '—';
  const end = j.finishedAt ? Date.parse(j.finishedAt) : Date.now();
  return duration(end - Date.parse(j.startedAt));
}

function render() {
  const titles = new Map(libraries.map((l) => [l.id, l.title]));
  const list = [...jobs.values()].sort((a, b) => b.id - a.id).slice(0, 100);
  const rows = list.map((j) => {
    const tr = el('tr');
    tr.dataset.state = j.state;
    tr.dataset.kind = j.kind;
    const state = el('td');
    state.append(el('span', j.state, `state ${j.state}`));
    const error = el('td', j.error ?? '', 'job-error');
    const actions = el('td', undefined, 'actions-cell');
    if (isAdmin() && (j.state === 'queued' || j.state === 'running'))
      actions.append(actionButton('Cancel', 'jobs-status', () => api(`/api/jobs/${j.id}/cancel`, { method: 'POST' }).then(({ body }) => update(body))));
    if (isAdmin() && j.retryable)
      actions.append(actionButton('Retry', 'jobs-status', () => api(`/api/jobs/${j.id}/retry`, { method: 'POST' }).then(({ body }) => update(body))));
    const created = el('td', undefined, 'date');
    created.append(when(j.createdAt));
    tr.append(titleCell(j, titles), state, progressCell(j), el('td', took(j), 'date'), created, error, actions);
    return tr;
  });
  fillRows('jobs', rows, 'No jobs yet. Importing, crawling or adding documentation starts one.');
}

function update(job) {
  jobs.set(job.id, job);
  render();
}

export function startJobs() {
  stopJobs();
  setStatus('jobs-status', '');
  // Titles and links need the library list; a job may name a library added since it was read.
  loadLibraries().then(render);
  // Running jobs' durations move on between events.
  clock = setInterval(() => [...jobs.values()].some((j) => j.state === 'running') && render(), 1000);
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
  clearInterval(clock);
}
