// Adding libraries: upload an export bundle (with upload progress), crawl a website (every
// parse-website option), a Git repository, an OpenAPI spec (URL or file), an llms.txt URL, PDF and DOCX files.
import { $, api, authHeaders, el, setStatus } from './core.js';

/** The chosen visibility, or undefined for the server's default (a member's teamspace, else everyone). */
const visibility = () => $('add-visibility').value || undefined;

/** A multipart upload with progress (fetch cannot report upload progress; XMLHttpRequest can). */
function upload(url, form, progressId) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    for (const [k, v] of Object.entries(authHeaders('POST'))) xhr.setRequestHeader(k, v);
    const bar = $(progressId);
    bar.hidden = false;
    bar.value = 0;
    xhr.upload.addEventListener('progress', (e) => {
      if (e.lengthComputable) bar.value = e.loaded / e.total;
    });
    xhr.addEventListener('load', () => {
      bar.value = 1;
      let body = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* not JSON */
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(new Error(body.message || `HTTP ${xhr.status}`));
    });
    xhr.addEventListener('error', () => reject(new Error('The upload failed (network).')));
    xhr.send(form);
  });
}

/** The answer's message, and a link to the Jobs page where the job's progress shows. */
function done(statusId, message) {
  setStatus(statusId, `${message} `);
  const link = el('a', 'Follow it on the Jobs page');
  link.href = '#/jobs';
  $(statusId).append(link, '.');
}

$('add-bundle').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData();
  form.append('bundleFile', $('bundle-file').files[0]);
  if (visibility()) form.append('visibility', visibility());
  if ($('bundle-force').checked) form.append('force', 'true');
  setStatus('bundle-status', 'Uploading…');
  try {
    const body = await upload('/api/import-libraries', form, 'bundle-progress');
    const skipped = body.skipped ?? [];
    done('bundle-status', `${body.message}${skipped.length ? ` Skipped: ${skipped.map((l) => `${l.project}: ${l.reason}`).join('; ')}.` : ''}`);
  } catch (err) {
    setStatus('bundle-status', err.message, true);
  }
});

$('add-crawl').addEventListener('submit', async (event) => {
  event.preventDefault();
  const number = (id) => ($(id).value.trim() ? Number($(id).value) : undefined);
  const json = {
    websiteUrl: $('crawl-url').value.trim(),
    name: $('crawl-name').value.trim() || undefined,
    description: $('crawl-description').value.trim() || undefined,
    maxPages: number('crawl-max-pages'),
    maxDepth: number('crawl-max-depth'),
    excludePatterns: $('crawl-exclude')
      .value.split('\n')
      .map((p) => p.trim())
      .filter(Boolean),
    respectRobots: $('crawl-robots').checked,
    schedule: $('crawl-schedule').value.trim() || undefined,
    force: $('crawl-force').checked,
    visibility: visibility(),
  };
  try {
    const { body } = await api('/api/parse-website', { method: 'POST', json });
    done('crawl-status', `${body.message}`);
  } catch (err) {
    setStatus('crawl-status', err.message, true);
  }
});

$('add-git').addEventListener('submit', async (event) => {
  event.preventDefault();
  const list = (id) =>
    $(id)
      .value.split(',')
      .map((p) => p.trim())
      .filter(Boolean);
  const json = {
    repoUrl: $('git-url').value.trim(),
    branch: $('git-branch').value.trim() || undefined,
    folders: list('git-folders'),
    excludeFolders: list('git-exclude-folders'),
    excludeFiles: list('git-exclude-files'),
    force: $('git-force').checked,
    visibility: visibility(),
  };
  setStatus('git-status', 'Checking the repository…');
  try {
    const { body } = await api('/api/parse', { method: 'POST', json });
    done('git-status', body.message);
  } catch (err) {
    setStatus('git-status', err.message, true);
  }
});

$('add-source').addEventListener('submit', async (event) => {
  event.preventDefault();
  const url = $('source-url').value.trim();
  const kind = $('source-kind').value;
  try {
    const json = kind === 'openapi' ? { openApiUrl: url, visibility: visibility() } : { llmstxtUrl: url, visibility: visibility() };
    const { body } = await api(`/api/v2/add/${kind}`, { method: 'POST', json });
    done('source-status', body.message);
  } catch (err) {
    setStatus('source-status', err.message, true);
  }
});

$('add-files').addEventListener('submit', async (event) => {
  event.preventDefault();
  const files = [...$('files-input').files];
  const openapi = files.length === 1 && /\.(json|ya?ml)$/i.test(files[0].name);
  const form = new FormData();
  if (visibility()) form.append('visibility', visibility());
  if (openapi) {
    form.append('openapiFile', files[0]);
    if ($('files-title').value.trim()) form.append('libraryTitle', $('files-title').value.trim());
  } else {
    for (const f of files) form.append('documentFiles', f);
    if ($('files-title').value.trim()) form.append('projectTitle', $('files-title').value.trim());
  }
  setStatus('files-status', 'Uploading…');
  try {
    const body = await upload(openapi ? '/api/v2/add/openapi-upload' : '/api/v2/add/file-upload', form, 'files-progress');
    done('files-status', body.message);
  } catch (err) {
    setStatus('files-status', err.message, true);
  }
});
