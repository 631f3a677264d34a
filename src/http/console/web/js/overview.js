// Overview: the broker's totals (GET /admin/v1/overview every 2 s), message rates from the
// difference of two answers, memory used against its limit.
import { call } from './api.js';
import { liveChart } from './chart.js';
import { el, tile } from './dom.js';
import { bytes, count, duration, rate, shortBytes } from './format.js';
import { every } from './poll.js';

export const intervalMs = 2000;

export function mount(view, route, app) {
  const tiles = {};
  const add = (grid, key, label) => {
    tiles[key] = tile(label, key);
    grid.append(tiles[key].node);
  };
  const broker = el('div', { class: 'tiles' });
  const messages = el('div', { class: 'tiles' });
  add(broker, 'version', 'Version');
  add(broker, 'uptime_seconds', 'Uptime');
  add(broker, 'shards', 'Shards');
  add(broker, 'ready', 'Ready');
  add(broker, 'store', 'Store');
  add(broker, 'memory.used_bytes', 'Memory used');
  add(broker, 'connections.total', 'Connections');
  add(broker, 'destinations.queues', 'Queues');
  add(messages, 'messages.published', 'Published');
  add(messages, 'messages.delivered', 'Delivered');
  add(messages, 'messages.ready', 'Ready');
  add(messages, 'messages.unacked', 'Unacked');
  add(messages, 'messages.redelivered', 'Redelivered');
  add(messages, 'messages.dead_lettered', 'Dead-lettered');
  add(messages, 'rate.published', 'Published /s');
  add(messages, 'rate.delivered', 'Delivered /s');
  const charts = el('div', { class: 'charts' });
  const listeners = el('tbody');
  const protocols = el('p', { class: 'hint', dataset: { k: 'connections.by_protocol' } });
  view.append(
    el('h1', {}, 'Overview'),
    broker, protocols, messages, charts,
    el('h2', {}, 'Listeners'),
    el('table', { class: 'grid', id: 'listeners' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Protocol'), el('th', {}, 'Address'), el('th', { class: 'num' }, 'Port'))),
      listeners),
  );
  const rates = liveChart(charts, {
    title: 'Messages per second', series: ['published', 'delivered', 'redelivered'], format: rate, key: 'rates',
  });
  const memory = liveChart(charts, { title: 'Memory', series: ['used', 'limit'], format: shortBytes, key: 'memory' });

  let previous = null;
  const poll = every(intervalMs, async () => {
    const o = await call('overview');
    const now = performance.now() / 1000;
    tiles.version.set(o.version, o.version);
    tiles.uptime_seconds.set(o.uptime_seconds, duration(o.uptime_seconds));
    tiles.shards.set(o.shards, count(o.shards));
    tiles.ready.set(o.ready, o.ready ? 'yes' : `no: ${(o.not_ready_because || []).join(', ')}`);
    tiles.store.set(o.store.kind, `${o.store.kind}${o.store.healthy ? '' : ' (failing)'}, commit ${rate(o.store.commit_ms_mean)} ms`);
    const limit = o.memory.limit_bytes;
    tiles['memory.used_bytes'].set(o.memory.used_bytes,
      limit ? `${bytes(o.memory.used_bytes)} of ${bytes(limit)}` : bytes(o.memory.used_bytes));
    tiles['connections.total'].set(o.connections.total, count(o.connections.total));
    tiles['destinations.queues'].set(o.destinations.queues, count(o.destinations.queues));
    for (const k of ['published', 'delivered', 'ready', 'unacked', 'redelivered', 'dead_lettered']) {
      tiles[`messages.${k}`].set(o.messages[k], count(o.messages[k]));
    }
    const byProtocol = Object.entries(o.connections).filter(([k]) => k !== 'total');
    protocols.textContent = byProtocol.length
      ? `Connections by protocol: ${byProtocol.map(([k, v]) => `${k} ${count(v)}`).join(', ')}`
      : 'No connections.';
    const sample = { t: now, m: o.messages };
    if (previous) {
      const dt = sample.t - previous.t;
      const per = (k) => Math.max(0, (sample.m[k] - previous.m[k]) / dt);
      tiles['rate.published'].set(per('published'), rate(per('published')));
      tiles['rate.delivered'].set(per('delivered'), rate(per('delivered')));
      rates.push(Date.now() / 1000, [per('published'), per('delivered'), per('redelivered')]);
    }
    previous = sample;
    memory.show(1, !!limit);  // no [core] memory_limit_bytes: nothing to draw
    memory.push(Date.now() / 1000, [o.memory.used_bytes, limit || null]);
    listeners.replaceChildren(...o.listeners.map((l) => el('tr', {},
      el('td', {}, l.protocol), el('td', {}, l.address), el('td', { class: 'num' }, String(l.port)))));
    app.say('');
  }, (e) => app.say(`Overview: ${e.message}`, 'error'));

  return () => {
    poll.stop();
    rates.destroy();
    memory.destroy();
  };
}
