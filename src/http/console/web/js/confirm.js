// An operation's confirmation, in the page (no window.confirm): `text`, then `action` on Yes;
// what it resolves to, or its error, goes into `result`. `done` runs after either outcome.
import { el } from './dom.js';

export function confirmPanel() {
  const box = el('div', { id: 'confirm', class: 'confirm', hidden: true });
  const result = el('p', { id: 'action-result', role: 'status' });
  const ask = (text, yesLabel, action, done = () => {}) => {
    const yes = el('button', { type: 'button', id: 'confirm-yes', class: 'danger' }, yesLabel);
    const no = el('button', { type: 'button', id: 'confirm-no' }, 'Cancel');
    box.replaceChildren(el('p', {}, text), yes, no);
    box.hidden = false;
    no.addEventListener('click', () => { box.hidden = true; });
    yes.addEventListener('click', async () => {
      box.hidden = true;
      try {
        result.textContent = await action();
        result.className = 'ok';
      } catch (e) {
        result.textContent = e.message;
        result.className = 'error';
      }
      done();
    });
    yes.focus();
  };
  const say = (text, kind) => {
    result.textContent = text;
    result.className = kind;
  };
  return { box, result, ask, say };
}
