// Destinations: queues, temporary queues and durable/shared subscriptions, filtered, sorted and
// paged by the broker (GET /admin/v1/destinations), so 100,000 queues cost one page of rows.
// The search and sort are kept in the address (#/destinations?filter=...) for links and reloads.
import { call } from './api.js';
import { el } from './dom.js';
import { bytes, count } from './format.js';
import { every } from './poll.js';
import { debounce, serverTable } from './table.js';

export const intervalMs = 5000;

export function detailHash(row) {
  return `#/${row.kind === 'subscription' ? 'subscription' : 'queue'}/${encodeURIComponent(row.name)}`;
}

export function mount(view, route, app) {
  const search = el('input', {
    type: 'search', id: 'destination-search', placeholder: 'Search names', value: route.params.get('filter') || '',
    maxlength: 1000, 'aria-label': 'Search destination names',
  });
  const kind = el('select', { id: 'destination-kind', 'aria-label': 'Kind' },
    el('option', { value: '' }, 'All kinds'),
    el('option', { value: 'queue' }, 'Queues'),
    el('option', { value: 'temp-queue' }, 'Temporary queues'),
    el('option', { value: 'subscription' }, 'Subscriptions'));
  kind.value = route.params.get('kind') || '';
  view.append(el('h1', {}, 'Destinations'), el('div', { class: 'controls' }, search, kind));
  const table = serverTable(view, {
    id: 'destinations',
    columns: [
      { key: 'name', label: 'Name', sort: 'name', cell: (r) => el('a', { href: detailHash(r) }, r.name) },
      { key: 'kind', label: 'Kind', cell: (r) => r.kind },
      { key: 'depth', label: 'Depth', sort: 'depth', num: true, cell: (r) => count(r.depth) },
      { key: 'bytes', label: 'Bytes', sort: 'bytes', num: true, cell: (r) => bytes(r.bytes) },
      { key: 'unacked', label: 'Unacked', sort: 'unacked', num: true, cell: (r) => count(r.unacked) },
      { key: 'consumers', label: 'Consumers', sort: 'consumers', num: true, cell: (r) => count(r.consumers) },
      { key: 'enqueued', label: 'Enqueued', sort: 'enqueued', num: true, cell: (r) => count(r.enqueued) },
    ],
  });
  if (route.params.get('sort')) table.state.sort = route.params.get('sort');
  if (route.params.get('order') === 'desc') table.state.order = 'desc';

  // Answers can come back out of order while someone types: only the latest is shown.
  let asked = 0;
  const load = async () => {
    const mine = ++asked;
    const query = { ...table.query(), filter: search.value, kind: kind.value };
    const page = await call('destinations', { query });
    if (mine !== asked) return;
    table.show(page, search.value ? 'No destination matches the search.' : 'No destinations yet.');
    view.dataset.loaded = `${search.value}|${kind.value}|${table.state.sort}|${table.state.order}|${table.state.offset}`;
    const keep = new URLSearchParams();
    if (search.value) keep.set('filter', search.value);
    if (kind.value) keep.set('kind', kind.value);
    if (table.state.sort !== 'name') keep.set('sort', table.state.sort);
    if (table.state.order === 'desc') keep.set('order', 'desc');
    const hash = `#/destinations${keep.toString() ? `?${keep}` : ''}`;
    if (location.hash !== hash) history.replaceState(null, '', hash);
    app.say('');
  };
  const poll = every(intervalMs, load, (e) => app.say(`Destinations: ${e.message}`, 'error'));
  const restart = () => {
    table.state.offset = 0;
    poll.now();
  };
  table.onChange(() => poll.now());
  search.addEventListener('input', debounce(restart, 200));
  kind.addEventListener('change', restart);
  search.focus();
  return () => poll.stop();
}
