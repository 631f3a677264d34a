// Building the page: every name, header and body from the broker goes in as text (textContent,
// attribute values), never as markup, so a queue called "<img onerror=...>" stays a string.

// el('td', {class: 'num', dataset: {k: 'depth'}}, 'text', child, ...)
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (key === 'class') node.className = value;
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export function count(n) {
  return typeof n === 'number' ? integer.format(n) : '–';
}

export function rate(n) {
  return typeof n === 'number' ? decimal.format(n) : '–';
}

export function bytes(n) {
  if (typeof n !== 'number') return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${integer.format(v)} B` : `${decimal.format(v)} ${units[i]}`;
}

// A chart axis: few digits ("954 MiB", "1.2 GiB").
export function shortBytes(n) {
  if (typeof n !== 'number') return '';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 || i === 0 ? Math.round(v) : Math.round(v * 10) / 10} ${units[i]}`;
}

export function duration(seconds) {
  if (typeof seconds !== 'number') return '–';
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

export function time(ms) {
  if (typeof ms !== 'number' || ms <= 0) return '–';
  const d = new Date(ms);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// A labelled figure whose raw value is kept in data-value (tests compare it with the API).
export function tile(label, key) {
  const value = el('span', { class: 'value', dataset: { k: key } }, '–');
  const node = el('div', { class: 'tile' }, el('span', { class: 'label' }, label), value);
  return { node, set(raw, text) { value.dataset.value = String(raw); value.textContent = text; } };
}
