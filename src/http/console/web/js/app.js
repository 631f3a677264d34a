// The console's shell: login, the hash router (#/overview, #/destinations, #/queue/NAME,
// #/subscription/NAME, #/connections) and the status line. Each page module exports
// mount(view, route, app) and returns a function that stops its polls and charts.
import { call, currentUser, login, logout, onDenied } from './api.js';
import { el } from './dom.js';
import * as overview from './overview.js';
import * as destinations from './destinations.js';
import * as destination from './destination.js';
import * as connections from './connections.js';

const view = document.getElementById('view');
const loginSection = document.getElementById('login');
const loginError = document.getElementById('login-error');
const nav = document.getElementById('nav');
const notice = document.getElementById('notice');
const who = document.getElementById('who');
const logoutButton = document.getElementById('logout');

let unmount = null;
let signedIn = false;

const app = {
  // A line under the bar: errors of a poll or an action, results of an action.
  say(text, kind = 'info') {
    notice.textContent = text;
    notice.className = kind;
    notice.hidden = !text;
  },
  go(hash) {
    location.hash = hash;
  },
};

// "#/queue/a%2Fb?x=1" -> {page: 'queue', arg: 'a/b', params: URLSearchParams}
function parseRoute() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs = ''] = raw.split('?');
  const slash = path.indexOf('/');
  const page = slash < 0 ? path : path.slice(0, slash);
  let arg = '';
  if (slash >= 0) {
    try {
      arg = decodeURIComponent(path.slice(slash + 1));
    } catch {
      arg = path.slice(slash + 1);
    }
  }
  return { page: page || 'overview', arg, params: new URLSearchParams(qs) };
}

const pages = { overview, destinations, queue: destination, subscription: destination, connections };

function render() {
  if (!signedIn) return;
  if (unmount) unmount();
  unmount = null;
  app.say('');
  view.replaceChildren();
  const route = parseRoute();
  const page = pages[route.page];
  for (const a of nav.querySelectorAll('a')) {
    const current = a.dataset.page === route.page || (a.dataset.page === 'destinations' && page === destination);
    a.classList.toggle('current', current);
  }
  if (!page) {
    view.append(el('p', { class: 'empty' }, 'No such page. ', el('a', { href: '#/overview' }, 'Go to the overview.')));
    return;
  }
  unmount = page.mount(view, route, app);
}

function showLogin(message) {
  signedIn = false;
  if (unmount) unmount();
  unmount = null;
  view.replaceChildren();
  nav.hidden = true;
  logoutButton.hidden = true;
  who.textContent = '';
  app.say('');
  loginSection.hidden = false;
  loginError.textContent = message || '';
  loginError.hidden = !message;
  document.getElementById(currentUser() ? 'login-password' : 'login-user').focus();
}

function showApp() {
  signedIn = true;
  loginSection.hidden = true;
  nav.hidden = false;
  const user = currentUser();
  who.textContent = user ? `Signed in as ${user}` : 'No login needed (loopback, no admin users)';
  logoutButton.hidden = !user;
  if (!location.hash) history.replaceState(null, '', '#/overview');
  render();
}

function deniedMessage(error) {
  if (error.status === 401) {
    return currentUser() ? `Login failed: ${error.detail || 'wrong user or password'}.` : 'Log in to see the broker.';
  }
  if (error.status === 403) return `Access denied: ${error.detail || 'this user has no admin right'}.`;
  if (error.status === 429) return `Too many failed logins: ${error.detail}`;
  return `The broker answered ${error.status}: ${error.detail}`;
}

// Does the API let us in with the credentials we hold (or none)?
async function probe() {
  try {
    await call('overview');
    showApp();
  } catch (e) {
    refuse(e);
  }
}

// Credentials the broker refused are forgotten (a reload then asks again rather than failing).
function refuse(error) {
  if (error.status === 0) {
    showLogin(error.message);
    return;
  }
  const message = deniedMessage(error);
  if (error.status === 401 || error.status === 403) logout();
  showLogin(message);
}

onDenied((error) => {
  if (signedIn) refuse(error);
});

document.getElementById('login-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = document.getElementById('login-user').value;
  const password = document.getElementById('login-password').value;
  document.getElementById('login-password').value = '';
  login(name, password);
  loginError.hidden = true;
  await probe();
});

logoutButton.addEventListener('click', () => {
  logout();
  showLogin('Logged out.');
});

window.addEventListener('hashchange', render);
probe();
