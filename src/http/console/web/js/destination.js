// One queue or subscription (#/queue/NAME, #/subscription/NAME): its figures and a live depth
// chart (its exact-name look-up, every 2 s), the messages it holds (browse, which
// consumes nothing), purge, and move (a dead-letter queue's replay) or copy to another queue.
import { call, enc } from './api.js';
import { liveChart } from './chart.js';
import { confirmPanel } from './confirm.js';
import { el, tile } from './dom.js';
import { bytes, count, time } from './format.js';
import { every } from './poll.js';

export const intervalMs = 2000;
const browseLimit = 20;

// Where a dead letter came from, as a queue name for the move form: its original-destination
// header if that was a queue, else the DLQ's name without "DLQ.".
function replayTarget(name, messages) {
  for (const m of messages) {
    const original = m.headers && m.headers['original-destination'];
    if (typeof original === 'string' && original.startsWith('/queue/')) return original.slice('/queue/'.length);
  }
  return name.startsWith('DLQ.') ? name.slice(4) : '';
}

function bodyText(m) {
  if (typeof m.body_preview === 'string') return m.body_preview;
  if (typeof m.body_preview_base64 === 'string') return `(binary, base64) ${m.body_preview_base64}`;
  return '';
}

export function mount(view, route, app) {
  const subscription = route.page === 'subscription';
  const name = route.arg;
  const kind = subscription ? 'subscription' : 'queue';
  const path = `${subscription ? 'subscriptions' : 'queues'}/${enc(name)}`;

  const tiles = {};
  const grid = el('div', { class: 'tiles' });
  for (const [key, label] of [['depth', 'Depth'], ['bytes', 'Bytes'], ['unacked', 'Unacked'],
    ['consumers', 'Consumers'], ['enqueued', 'Enqueued'], ['durable', 'Durable']]) {
    tiles[key] = tile(label, key);
    grid.append(tiles[key].node);
  }
  const charts = el('div', { class: 'charts single' });
  const missing = el('p', { class: 'empty', hidden: true, id: 'missing' });

  // Purge and move, each confirmed in the page before it runs.
  const purgeSelector = el('input', { id: 'purge-selector', placeholder: "selector, e.g. dlq-reason = 'expired' (empty: all)", maxlength: 4000 });
  const purgeButton = el('button', { type: 'button', id: 'purge', class: 'danger' }, 'Purge…');
  const moveTo = el('input', { id: 'move-to', placeholder: 'target queue', maxlength: 1000, required: true });
  const moveSelector = el('input', { id: 'move-selector', placeholder: 'selector (empty: all)', maxlength: 4000 });
  const moveCopy = el('input', { type: 'checkbox', id: 'move-copy' });
  const moveButton = el('button', { type: 'button', id: 'move' }, name.startsWith('DLQ.') ? 'Replay…' : 'Move…');
  const confirm = confirmPanel();

  const messages = el('tbody');
  const browseInfo = el('span', { class: 'pager-info', dataset: { k: 'browse-range' } });
  const prev = el('button', { type: 'button', class: 'prev' }, '‹ Previous');
  const next = el('button', { type: 'button', class: 'next' }, 'Next ›');
  const refresh = el('button', { type: 'button', id: 'browse-refresh' }, 'Refresh');
  let browseOffset = 0;

  view.append(
    el('p', { class: 'crumbs' }, el('a', { href: '#/destinations' }, 'Destinations'), ` › ${kind}`),
    el('h1', { id: 'destination-name' }, name),
    missing, grid, charts,
    el('h2', {}, 'Operations'),
    el('div', { class: 'operations' },
      el('div', { class: 'operation' }, el('label', {}, 'Purge ready messages', purgeSelector), purgeButton),
      el('div', { class: 'operation' },
        el('label', {}, subscription ? 'Move to queue' : 'Move (replay) to queue', moveTo),
        el('label', {}, 'Selector', moveSelector),
        el('label', { class: 'inline' }, moveCopy, 'copy, keep the originals'),
        moveButton)),
    confirm.box, confirm.result,
    el('h2', {}, 'Messages'),
    el('p', { class: 'hint' }, 'Browsing consumes nothing: ready messages first, then those a consumer holds.'),
    el('table', { class: 'grid messages', id: 'messages' },
      el('thead', {}, el('tr', {}, ['#', 'Id', 'Priority', 'Persistent', 'Deliveries', 'Time', 'Headers', 'Body']
        .map((h) => el('th', {}, h)))),
      messages),
    el('div', { class: 'pager' }, prev, browseInfo, next, refresh),
  );
  const depthChart = liveChart(charts, { title: `Depth of ${name}`, series: ['ready', 'unacked'], format: count, key: 'depth', integer: true });

  const stats = every(intervalMs, async () => {
    // The exact-name look-up (GET /admin/v1/queues/NAME, a temporary queue's too, or
    // /subscriptions/NAME): one queue read on its owner shard, however many the broker holds.
    let row;
    try {
      row = await call(path);
    } catch (e) {
      if (e.status !== 404) throw e;
      row = null;
    }
    missing.hidden = !!row;
    if (!row) {
      // The broker drops an empty queue nobody consumes: for the page it is empty, not an error.
      missing.textContent = `No ${kind} called ${name} exists now: it holds no messages and has no consumers.`;
      for (const key of ['depth', 'unacked', 'consumers']) tiles[key].set(0, '0');
      tiles.bytes.set(0, bytes(0));
      depthChart.push(Date.now() / 1000, [0, 0]);
      return;
    }
    for (const key of ['depth', 'unacked', 'consumers', 'enqueued']) tiles[key].set(row[key], count(row[key]));
    tiles.bytes.set(row.bytes, bytes(row.bytes));
    tiles.durable.set(row.durable, row.durable ? 'yes' : 'no');
    depthChart.push(Date.now() / 1000, [row.depth, row.unacked]);
  }, (e) => app.say(`${name}: ${e.message}`, 'error'));

  let browsed = [];
  let targetTouched = false;
  moveTo.addEventListener('input', () => { targetTouched = true; });
  const browse = async () => {
    try {
      browsed = await call(`${path}/messages`, { query: { offset: browseOffset, limit: browseLimit } });
    } catch (e) {
      if (e.status !== 404) {
        app.say(`Browse ${name}: ${e.message}`, 'error');
        return;
      }
      browsed = [];  // gone: nothing to show
    }
    messages.replaceChildren(...browsed.map((m, i) => el('tr', { dataset: { id: m.id } },
      el('td', { class: 'num' }, String(browseOffset + i + 1)),
      el('td', { class: 'mono' }, m.id),
      el('td', { class: 'num' }, String(m.priority)),
      el('td', {}, m.persistent ? 'yes' : 'no'),
      el('td', { class: 'num' }, `${m.delivery_count}${m.redelivered ? ' (redelivered)' : ''}`),
      el('td', {}, time(m.timestamp_ms)),
      el('td', { class: 'headers' }, Object.entries(m.headers || {}).map(([k, v]) => el('div', {}, el('b', {}, k), `: ${v}`))),
      el('td', { class: 'body' }, el('pre', { dataset: { k: 'body' } }, bodyText(m)),
        m.body_bytes > 1024 ? el('span', { class: 'hint' }, `first 1 KiB of ${bytes(m.body_bytes)}`) : null))));
    if (browsed.length === 0) {
      messages.append(el('tr', {}, el('td', { colspan: 8, class: 'empty' }, browseOffset ? 'No more messages.' : 'No messages.')));
    }
    browseInfo.textContent = browsed.length ? `${browseOffset + 1}–${browseOffset + browsed.length}` : '';
    prev.disabled = browseOffset === 0;
    next.disabled = browsed.length < browseLimit;
    if (!targetTouched && !moveTo.value) moveTo.value = replayTarget(name, browsed);
    view.dataset.browsed = String(browsed.length);
  };
  prev.addEventListener('click', () => { browseOffset = Math.max(0, browseOffset - browseLimit); browse(); });
  next.addEventListener('click', () => { browseOffset += browseLimit; browse(); });
  refresh.addEventListener('click', browse);
  browse();

  const afterwards = () => {
    browseOffset = 0;
    stats.now();
    browse();
  };

  purgeButton.addEventListener('click', () => {
    const selector = purgeSelector.value.trim();
    confirm.ask(selector ? `Delete the ready messages of ${name} that match ${selector}?` : `Delete every ready message of ${name}?`,
      'Yes, purge', async () => {
        const r = await call(`${path}/messages`, { method: 'DELETE', query: { selector } });
        return `Purged ${count(r.purged)} message${r.purged === 1 ? '' : 's'} from ${name}.`;
      }, afterwards);
  });
  moveButton.addEventListener('click', () => {
    const to = moveTo.value.trim();
    if (!to) {
      confirm.say('Name the queue to move the messages to.', 'error');
      return;
    }
    const selector = moveSelector.value.trim();
    const copy = moveCopy.checked;
    confirm.ask(`${copy ? 'Copy' : 'Move'} the ready messages of ${name}${selector ? ` that match ${selector}` : ''} to ${to}?`,
      copy ? 'Yes, copy' : 'Yes, move', async () => {
        const r = await call(`${path}/move`, { method: 'POST', query: { to, selector, copy: copy ? 'true' : '' } });
        const n = copy ? r.copied : r.moved;
        return `${copy ? 'Copied' : 'Moved'} ${count(n)} message${n === 1 ? '' : 's'} to ${to}.`;
      }, afterwards);
  });

  return () => {
    stats.stop();
    depthChart.destroy();
  };
}
