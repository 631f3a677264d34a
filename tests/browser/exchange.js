// The messaging a browser tab or a node script does with Carrier over WebSocket, with stomp.js
// and mqtt.js unchanged: each protocol sends to itself, then STOMP to MQTT and back. The same
// code runs in chromium (page.html, the UMD bundles' globals) and in node (node.mjs).

export async function exchange(StompJs, mqtt, url, tag, log = () => {}) {
  const got = {};
  const waiters = {};
  const arrived = (key, value) => {
    log(`${key}: ${value}`);
    got[key] = value;
    if (waiters[key]) waiters[key](value);
  };
  const wait = (key) => (key in got ? Promise.resolve(got[key]) : new Promise((resolve) => (waiters[key] = resolve)));

  const stomp = new StompJs.Client({ brokerURL: url, reconnectDelay: 0, heartbeatIncoming: 0, heartbeatOutgoing: 0 });
  const stompUp = new Promise((resolve, reject) => {
    stomp.onConnect = (frame) => resolve(frame);
    stomp.onStompError = (frame) => reject(new Error(`STOMP ERROR ${frame.headers.message}`));
    stomp.onWebSocketClose = (evt) => reject(new Error(`STOMP WebSocket closed ${evt.code}`));
  });
  stomp.activate();
  const connected = await stompUp;
  log(`stomp connected, version ${connected.headers.version}`);

  const client = mqtt.connect(url, { clientId: `browser-${tag}`, reconnectPeriod: 0 });
  await new Promise((resolve, reject) => {
    client.on('connect', resolve);
    client.on('error', reject);
  });
  log('mqtt connected');

  stomp.subscribe(`/topic/browser.${tag}.stomp`, (m) => arrived('stomp', m.body));
  stomp.subscribe(`/topic/browser.${tag}.back`, (m) => arrived('mqttToStomp', m.body));
  client.on('message', (topic, payload) => {
    arrived(topic.endsWith('/cross') ? 'stompToMqtt' : 'mqtt', payload.toString());
  });
  await client.subscribeAsync([`browser/${tag}/mqtt`, `browser/${tag}/cross`], { qos: 1 });
  // A receipt on a SUBSCRIBE-then-SEND pair: the subscriptions are in place before the sends.
  await new Promise((resolve) => {
    stomp.watchForReceipt('ready', resolve);
    stomp.publish({ destination: `/queue/browser.${tag}.sync`, headers: { receipt: 'ready' }, body: 'sync' });
  });

  stomp.publish({ destination: `/topic/browser.${tag}.stomp`, body: 'stomp.js to itself' });
  await client.publishAsync(`browser/${tag}/mqtt`, 'mqtt.js to itself', { qos: 1 });
  stomp.publish({ destination: `/topic/browser.${tag}.cross`, body: 'stomp.js to mqtt.js' });
  await client.publishAsync(`browser/${tag}/back`, 'mqtt.js to stomp.js', { qos: 1 });

  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error(`timed out; got ${JSON.stringify(got)}`)), 15000));
  await Promise.race([Promise.all(['stomp', 'mqtt', 'stompToMqtt', 'mqttToStomp'].map(wait)), timeout]);
  await client.endAsync();
  await stomp.deactivate();
  return got;
}
