// The page's only door to the server: GET requests under api/v1/ with the user's token.
// Paths are relative to the page, so the page works under any prefix the server mounts it at.

const TOKEN_KEY = 'mculab.token';

export function getToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';  // storage disabled: behave as "no token"
  }
}

// Stores (or with '' forgets) the token and tells the page, which reloads its data.
export function setToken(token) {
  const t = String(token || '').trim();
  try {
    if (t) localStorage.setItem(TOKEN_KEY, t);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage disabled: the token lasts until the page is closed
  }
  window.dispatchEvent(new CustomEvent('mculab:token'));
}

// A link like http://HOST:PORT/#token=mcl_u_... (printed by deploy/quickstart.sh) hands the page a
// token without sending it to the server: the fragment never leaves the browser. The token goes
// to localStorage and the fragment is removed from the address bar (and from the history entry).
export function takeTokenFromFragment(loc = window.location, hist = window.history) {
  const hash = loc.hash || '';
  const m = /^#token=([^&]*)/.exec(hash);
  if (!m) return false;
  let token = '';
  try {
    token = decodeURIComponent(m[1]);
  } catch {
    token = m[1];
  }
  try {
    hist.replaceState(hist.state, '', loc.pathname + loc.search);
  } catch {
    loc.hash = '';
  }
  if (token) setToken(token);
  return Boolean(token);
}

if (typeof window !== 'undefined' && window.location) {
  takeTokenFromFragment();
  // The link opened in a tab that already shows the page changes only the fragment: no reload.
  window.addEventListener('hashchange', () => takeTokenFromFragment());
}

export function authHeaders() {
  const t = getToken();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// Text for a failed request, as the page shows it.
export function describeApiError(err) {
  if (err instanceof ApiError) {
    if (err.status === 401) {
      return `The server wants a valid API token (${err.message}). Paste yours into the ` +
          '"Token" box at the top of the page.';
    }
    if (err.status === 403) return `Your token may not do this: ${err.message}`;
    return `${err.message} (HTTP ${err.status})`;
  }
  if (err && err.name === 'AbortError') return 'Request cancelled.';
  return `Could not reach the server: ${err && err.message ? err.message : err}`;
}

// GET api/v1/<path>?<params> with the token: the response.
function apiFetch(path, params, accept, signal) {
  const query = params ? `?${new URLSearchParams(params)}` : '';
  return fetch(`api/v1/${path}${query}`, {
    headers: { Accept: accept, ...authHeaders() },
    signal,
    cache: 'no-store',
  });
}

// GET api/v1/<path>?<params> -> the body as text (a CSV file), or throws ApiError with the
// server's message.
export async function apiGetText(path, params, { signal } = {}) {
  const res = await apiFetch(path, params, 'text/csv, application/json', signal);
  const text = await res.text();
  if (!res.ok) {
    let message = res.statusText || 'request failed';
    try {
      const body = JSON.parse(text);
      if (body && typeof body.error === 'string') message = body.error;
    } catch {
      // not JSON: the status says it
    }
    throw new ApiError(res.status, message);
  }
  return text;
}

// GET api/v1/<path>?<params> -> parsed JSON, or throws ApiError with the server's message.
export async function apiGet(path, params, { signal } = {}) {
  const res = await apiFetch(path, params, 'application/json', signal);
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const message = body && typeof body.error === 'string' ? body.error : res.statusText || 'request failed';
    throw new ApiError(res.status, message);
  }
  if (body === null) throw new ApiError(res.status, 'the server sent no JSON');
  return body;
}
