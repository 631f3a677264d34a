// node eventsource.mjs BROKER_URL PATH: an EventSource in Debian's chromium, headless
// (puppeteer-core, CHROMIUM or /usr/bin/chromium), on a page of the broker's own origin (so no
// CORS is involved), streaming PATH. Prints one JSON line per event ({"id", "data"}) and per
// (re)opened connection ({"open": n}) as they happen, until stdin closes; exits 3 if chromium
// cannot start at all.
import puppeteer from 'puppeteer-core';

const [brokerUrl, path] = process.argv.slice(2);
let browser;
try {
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
} catch (e) {
  console.log(JSON.stringify({ ok: false, launch: true, error: String(e.message || e) }));
  process.exit(3);
}
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
