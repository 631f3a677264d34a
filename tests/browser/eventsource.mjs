// node eventsource.mjs BROKER_URL PATH: an EventSource in Debian's chromium, headless
// (puppeteer-core, CHROMIUM or /usr/bin/chromium), on a page of the broker's own origin (so no
// CORS is involved), streaming PATH. Prints one JSON line per event ({"id", "data"}) and per
// (re)opened connection ({"open": n}) as they happen, until stdin closes; exits 3 if chromium
// cannot start at all.
import { launchChromium } from './launch.mjs';

const [brokerUrl, path] = process.argv.slice(2);
const browser = await launchChromium();
const page = await browser.newPage();
await page.exposeFunction('report', (line) => console.log(line));
await page.goto(`${brokerUrl}/healthz`);
await page.evaluate((p) => {
  let opened = 0;
  const source = new EventSource(p);
  source.onopen = () => window.report(JSON.stringify({ open: ++opened }));
  source.onmessage = (e) => window.report(JSON.stringify({ id: e.lastEventId, data: e.data }));
}, path);
process.stdin.resume();
process.stdin.on('end', async () => {
  await browser.close();
  process.exit(0);
});
