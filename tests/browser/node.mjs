// node node.mjs URL TAG: the exchange of exchange.js from node (ws as the WebSocket); prints
// what arrived as JSON, exits 1 on failure.
import * as StompJs from '@stomp/stompjs';
import mqtt from 'mqtt';
import WebSocket from 'ws';

import { exchange } from './exchange.js';

Object.assign(globalThis, { WebSocket });
const [url, tag] = process.argv.slice(2);
try {
  const got = await exchange(StompJs, mqtt, url, tag);
  console.log(JSON.stringify({ ok: true, got }));
  process.exit(0);
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message || e) }));
  process.exit(1);
}
