// A server-side table: the API filters, sorts and cuts the page (offset/limit), the page shows
// one page of rows and a pager. Used by the destination and connection lists.
import { el } from './dom.js';
import { count } from './format.js';

// columns: [{key, label, sort (API sort key or undefined), num, optional, cell(row) -> Node|string}]
export function serverTable(container, { columns, pageSize = 50, id }) {
  const state = { sort: columns.find((c) => c.sort)?.sort, order: 'asc', offset: 0 };
  const head = el('tr');
  const body = el('tbody');
  const info = el('span', { class: 'pager-info', dataset: { k: 'range' } });
  const prev = el('button', { type: 'button', class: 'prev' }, '‹ Previous');
  const next = el('button', { type: 'button', class: 'next' }, 'Next ›');
  const table = el('table', { class: 'grid', id }, el('thead', {}, head), body);
  container.append(el('div', { class: 'pager' }, prev, info, next), table);
  let onChange = () => {};
  let total = 0;

  const headers = columns.map((c) => {
    const th = el('th', { class: [c.num ? 'num' : '', c.sort ? 'sortable' : ''].join(' '), dataset: { sort: c.sort || '' } }, c.label);
    if (c.sort) {
      th.addEventListener('click', () => {
        if (state.sort === c.sort) {
          state.order = state.order === 'asc' ? 'desc' : 'asc';
        } else {
          state.sort = c.sort;
          state.order = c.num ? 'desc' : 'asc';  // biggest counts first, names A to Z
        }
        state.offset = 0;
        onChange();
      });
    }
    head.append(th);
    return th;
  });

  prev.addEventListener('click', () => {
    state.offset = Math.max(0, state.offset - pageSize);
    onChange();
  });
  next.addEventListener('click', () => {
    if (state.offset + pageSize < total) state.offset += pageSize;
    onChange();
  });

  return {
    state,
    pageSize,
    onChange(fn) {
      onChange = fn;
    },
    query() {
      return { sort: state.sort, order: state.order, offset: state.offset, limit: pageSize };
    },
    show(page, empty) {
      total = page.total;
      if (state.offset >= total && total > 0) {
        // The rows shrank under the page: go to the last page at the next refresh.
        state.offset = Math.floor((total - 1) / pageSize) * pageSize;
      }
      headers.forEach((th, i) => {
        const c = columns[i];
        th.classList.toggle('asc', state.sort === c.sort && state.order === 'asc');
        th.classList.toggle('desc', state.sort === c.sort && state.order === 'desc');
      });
      // An optional column shows only when some row of the page has its field.
      const shown = columns.map((c) => !c.optional || page.items.some((row) => row[c.key] !== undefined && row[c.key] !== null));
      headers.forEach((th, i) => { th.hidden = !shown[i]; });
      body.replaceChildren(...page.items.map((row) => el('tr', {},
        columns.filter((c, i) => shown[i]).map((c) => el('td', { class: c.num ? 'num' : '', dataset: { k: c.key } }, c.cell(row))))));
      if (page.items.length === 0) {
        body.append(el('tr', {}, el('td', { colspan: columns.length, class: 'empty' }, empty)));
      }
      const from = page.items.length ? state.offset + 1 : 0;
      info.dataset.total = String(total);
      info.textContent = `${count(from)}–${count(state.offset + page.items.length)} of ${count(total)}`;
      prev.disabled = state.offset === 0;
      next.disabled = state.offset + pageSize >= total;
    },
  };
}

// Calls `fn` once typing pauses for `ms`.
export function debounce(fn, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}
