// The admin API (/admin/v1/, docs/admin.md) from the page: HTTP Basic credentials the user typed,
// kept in this tab's sessionStorage (never in a URL), sent by hand on each call. `credentials:
// 'omit'` keeps the browser's own password prompt and credential cache out of it.

const storageKey = 'carrier.console.authorization';
let authorization = sessionStorage.getItem(storageKey);
let user = sessionStorage.getItem(`${storageKey}.user`);

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.detail = detail;
  }
}

function base64(text) {
  let binary = '';
  for (const b of new TextEncoder().encode(text)) binary += String.fromCharCode(b);
  return btoa(binary);
}

export function login(name, password) {
  authorization = `Basic ${base64(`${name}:${password}`)}`;
  user = name;
  sessionStorage.setItem(storageKey, authorization);
  sessionStorage.setItem(`${storageKey}.user`, name);
}

export function logout() {
  authorization = null;
  user = null;
  sessionStorage.removeItem(storageKey);
  sessionStorage.removeItem(`${storageKey}.user`);
}

export function currentUser() {
  return authorization ? user : null;
}

// Listeners told about every 401/403 (the app shows the login form).
const deniedListeners = [];
export function onDenied(fn) {
  deniedListeners.push(fn);
}

// `path` is relative to /admin/v1/; `query` an object of parameters (empty ones left out).
export async function call(path, { method = 'GET', query = {} } = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  }
  const qs = params.toString();
  const headers = { Accept: 'application/json' };
  if (authorization) headers.Authorization = authorization;
  let response;
  try {
    response = await fetch(`/admin/v1/${path}${qs ? `?${qs}` : ''}`, {
      method, headers, credentials: 'omit', cache: 'no-store',
    });
  } catch (e) {
    throw new ApiError(0, `the broker cannot be reached (${e.message})`);
  }
  const text = await response.text();
  let body = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  }
  if (!response.ok) {
    const detail = body && typeof body.detail === 'string' ? body.detail : text.slice(0, 300) || response.statusText;
    const error = new ApiError(response.status, detail);
    if (response.status === 401 || response.status === 403) deniedListeners.forEach((fn) => fn(error));
    throw error;
  }
  return body;
}

export function enc(name) {
  return encodeURIComponent(name);
}
