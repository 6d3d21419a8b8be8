// The frame every page shares: site header with navigation, the live-updates indicator and the
// token box. Pages call initLayout() once and render into the returned <main>.
import { ApiError, apiGet, getToken, setToken } from './api.js';
import { h, replaceChildren } from './dom.js';

const PAGES = [
  ['history', 'History', 'index.html'],
  ['compare', 'Compare', 'compare.html'],
  ['trend', 'Trend', 'trend.html'],
  ['boards', 'Boards', 'boards.html'],
];

function tokenBox() {
  const input = h('input', {
    type: 'password', id: 'token-input', name: 'token', autocomplete: 'off', spellcheck: 'false',
    placeholder: 'paste your API token',
  });
  const summaryText = h('span', {});
  const details = h('details', { class: 'token-box' },
      h('summary', {}, summaryText));
  // "Token ✓" only once the server accepted the token (an authenticated request answered 2xx);
  // a refused token says so. A later check wins over an earlier one still in flight.
  let check = 0;
  const show = (state, text) => {
    summaryText.textContent = text;
    details.dataset.token = state;
    details.classList.toggle('token-missing', state === 'none' || state === 'refused');
  };
  const refresh = async () => {
    input.value = '';
    const token = getToken();
    const mine = ++check;
    if (token === '') {
      show('none', 'Token: none');
      return;
    }
    show('checking', 'Token: checking…');
    try {
      await apiGet('boards');
      if (mine === check) show('ok', 'Token ✓');
    } catch (err) {
      if (mine !== check) return;
      if (err instanceof ApiError && err.status === 401) show('refused', 'Token ✗ refused by the server');
      else show('unchecked', 'Token: not checked (server unreachable)');
    }
  };
  const form = h('form', { class: 'token-form', id: 'token-form' },
      h('label', { for: 'token-input' }, 'API token'),
      input,
      h('button', { type: 'submit' }, 'Save'),
      h('button', { type: 'button', id: 'token-forget', on: { click: () => { setToken(''); } } }, 'Forget'),
      h('p', { class: 'hint' }, 'Kept in this browser (localStorage) and sent as ' +
          '"Authorization: Bearer …" with every request.'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    setToken(input.value);
    details.open = false;
  });
  details.append(form);
  window.addEventListener('mculab:token', refresh);
  refresh();
  return details;
}

export function initLayout(current) {
  const header = document.getElementById('site-header');
  const live = h('span', { class: 'live-status', id: 'live-status', role: 'status' }, '');
  const nav = h('nav', { class: 'site-nav', 'aria-label': 'pages' },
      PAGES.map(([key, label, href]) => h('a', {
        href, class: key === current ? 'current' : null,
        'aria-current': key === current ? 'page' : null,
      }, label)));
  replaceChildren(header,
      h('a', { class: 'brand', href: 'index.html' }, 'mculab'),
      nav,
      h('div', { class: 'header-tools' }, live, tokenBox()));
  const main = document.getElementById('main');
  return {
    main,
    setLive(status, detail) {
      live.dataset.status = status;
      const text = {
        connecting: 'connecting…',
        open: '● live',
        retrying: `reconnecting in ${Math.round((detail || 0) / 1000)} s`,
        unauthorized: 'no live updates: token needed',
        closed: 'live updates off',
      }[status] || status;
      live.textContent = text;
    },
  };
}

// Sets the document title: "mculab · <what>".
export function setTitle(what) {
  document.title = what ? `mculab · ${what}` : 'mculab';
}
