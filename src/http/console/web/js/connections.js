// Connections: every open connection (GET /admin/v1/connections, paged by the broker) and a
// Close button (DELETE /admin/v1/connections/{id}: the client gets its protocol's goodbye).
import { call } from './api.js';
import { confirmPanel } from './confirm.js';
import { el } from './dom.js';
import { bytes, count, time } from './format.js';
import { every } from './poll.js';
import { debounce, serverTable } from './table.js';

export const intervalMs = 3000;

export function mount(view, route, app) {
  const search = el('input', {
    type: 'search', id: 'connection-search', placeholder: 'Peer address or protocol', maxlength: 1000,
    'aria-label': 'Search connections',
  });
  const confirm = confirmPanel();
  view.append(el('h1', {}, 'Connections'), el('div', { class: 'controls' }, search), confirm.box, confirm.result);

  let poll = null;
  const close = (row) => confirm.ask(`Close connection ${row.id} (${row.protocol}, ${row.peer})?`, 'Close it', async () => {
    try {
      await call(`connections/${row.id}`, { method: 'DELETE' });
    } catch (e) {
      throw new Error(`Connection ${row.id}: ${e.message}`);
    }
    return `Connection ${row.id} closed.`;
  }, () => poll.now());

  // Fields a newer broker adds (client id, user, ...) show when the answer has them.
  const optional = (key) => (r) => (r[key] === undefined || r[key] === null ? '' : String(r[key]));
  const table = serverTable(view, {
    id: 'connections',
    columns: [
      { key: 'id', label: 'Id', sort: 'id', num: true, cell: (r) => String(r.id) },
      { key: 'protocol', label: 'Protocol', sort: 'protocol', cell: (r) => r.protocol },
      { key: 'peer', label: 'Peer', sort: 'peer', cell: (r) => r.peer },
      { key: 'client_id', label: 'Client id', optional: true, cell: optional('client_id') },
      { key: 'user', label: 'User', optional: true, cell: optional('user') },
      { key: 'shard', label: 'Shard', num: true, cell: (r) => String(r.shard) },
      { key: 'since', label: 'Connected since', sort: 'since', cell: (r) => time(r.since_ms) },
      { key: 'queued', label: 'Output queued', sort: 'queued', num: true, cell: (r) => bytes(r.queued_bytes) },
      { key: 'close', label: '', cell: (r) => el('button', { type: 'button', class: 'close', dataset: { id: String(r.id) }, onclick: () => close(r) }, 'Close') },
    ],
  });
  let asked = 0;
  poll = every(intervalMs, async () => {
    const mine = ++asked;
    const page = await call('connections', { query: { ...table.query(), filter: search.value } });
    if (mine !== asked) return;
    table.show(page, search.value ? 'No connection matches.' : 'No connections.');
    view.dataset.loaded = `${search.value}|${count(page.total)}`;
  }, (e) => app.say(`Connections: ${e.message}`, 'error'));
  table.onChange(() => poll.now());
  search.addEventListener('input', debounce(() => { table.state.offset = 0; poll.now(); }, 200));
  return () => poll.stop();
}
