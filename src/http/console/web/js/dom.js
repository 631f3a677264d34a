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

// A labelled figure whose raw value is kept in data-value (tests compare it with the API).
export function tile(label, key) {
  const value = el('span', { class: 'value', dataset: { k: key } }, '–');
  const node = el('div', { class: 'tile' }, el('span', { class: 'label' }, label), value);
  return { node, set(raw, text) { value.dataset.value = String(raw); value.textContent = text; } };
}
