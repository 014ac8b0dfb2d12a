// The console's router: one section per page, chosen by the address's hash.
import { $, setStatus } from './core.js';
import { loadSession, onAccountChange, showAccount } from './account.js';
import { loadLibraries } from './search.js';
import { showLibrary } from './library.js';
import { loadKeys } from './keys.js';
import { startJobs, stopJobs } from './jobs.js';
import { loadAdmin, stopAdmin } from './admin.js';
import './add.js';
import { showChecklist } from './checklist.js';
import { loadInvitations, onInviteAccepted, showInvitePage } from './invitations.js';
import { loadPublicUrl } from './public-url.js';

const PAGES = ['home', 'library-page', 'signin-page', 'setup-page', 'invite-page', 'keys-page', 'add-page', 'jobs-page', 'admin-page'];

function show(page) {
  for (const p of PAGES) $(p).hidden = p !== page;
  for (const a of document.querySelectorAll('#pages a')) a.classList.toggle('current', a.dataset.page === page);
}

/** `#/`, `#/library/owner/repo`, `#/signin`, `#/setup/<token>`, `#/keys`, `#/add`, `#/jobs`, `#/admin`. */
function route() {
  const hash = location.hash;
  stopJobs();
  stopAdmin();
  if (hash.startsWith('#signin-error=')) {
    show('signin-page');
    return setStatus('signin-status', decodeURIComponent(hash.slice('#signin-error='.length)), true);
  }
  if (hash === '#/signin') return show('signin-page');
  if (hash.startsWith('#/setup/')) return show('setup-page');
  if (hash.startsWith('#/invite/')) {
    show('invite-page');
    return showInvitePage();
  }
  const pages = {
    '#/keys': ['keys-page', loadKeys],
    '#/add': ['add-page', () => showChecklist('checklist-add')],
    '#/jobs': ['jobs-page', startJobs],
    '#/admin': ['admin-page', () => Promise.all([loadAdmin(), loadInvitations(), loadPublicUrl()])],
  };
  if (pages[hash]) {
    show(pages[hash][0]);
    return pages[hash][1]();
  }
  if (hash.startsWith('#/library/')) {
    show('library-page');
    return showLibrary(decodeURIComponent(hash.slice('#/library'.length)));
  }
  show('home');
  showChecklist('checklist-home');
  // Libraries come and go (imports, crawls, deletes): the list is read again each time it is shown.
  return loadLibraries();
}

window.addEventListener('hashchange', route);
// "/" focuses the question, as on most search pages (not while typing in a field).
document.addEventListener('keydown', (e) => {
  if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || ['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement?.tagName)) return;
  e.preventDefault();
  (location.hash.startsWith('#/library/') ? $('ask-query') : $('query')).focus();
});

onAccountChange(route);
// An accepted invitation signs the invitee in: on to the search page, as a signed-in user.
onInviteAccepted(async () => {
  await loadSession();
  location.hash = '#/';
});
await loadSession();
showAccount();
if (location.hash.startsWith('#/library/')) await loadLibraries();
route();
