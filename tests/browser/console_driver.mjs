// node console_driver.mjs: Debian's chromium headless (puppeteer-core) driven by JSON lines on
// stdin, one answer line on stdout each, for the console tests (tests/test_console_*.py).
// Commands: {op: goto|click|type|select|press|wait|eval|text|screenshot|events, ...}; answers
// {ok: true, value} or {ok: false, error}. Dialogs (alert/confirm) are recorded and dismissed:
// the console opens none, so any is a failure the test sees. Exits 3 if chromium cannot start.
import readline from 'node:readline';
import { launchChromium } from './launch.mjs';

const out = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const browser = await launchChromium({ args: ['--window-size=1280,900'], defaultViewport: { width: 1280, height: 900 } });
const page = await browser.newPage();
const events = { pageErrors: [], consoleErrors: [], dialogs: [], requests: [], csp: [] };
page.on('pageerror', (e) => events.pageErrors.push(String(e)));
page.on('console', (m) => {
  if (m.type() === 'error') events.consoleErrors.push(m.text());
});
page.on('dialog', async (d) => {
  events.dialogs.push(`${d.type()}: ${d.message()}`);
  await d.dismiss();
});
page.on('request', (r) => events.requests.push(r.url()));
out({ ok: true, ready: true, userAgent: await browser.userAgent() });

const commands = {
  goto: async (c) => (await page.goto(c.url, { waitUntil: 'load' }))?.status(),
  click: async (c) => {
    await page.waitForSelector(c.selector, { visible: true, timeout: c.timeout || 10000 });
    await page.click(c.selector);
  },
  // Replaces the field's text, as a user selecting it and typing would.
  type: async (c) => {
    await page.waitForSelector(c.selector, { visible: true, timeout: c.timeout || 10000 });
    await page.$eval(c.selector, (e) => { e.value = ''; });
    await page.type(c.selector, c.text);
  },
  select: async (c) => page.select(c.selector, c.value),
  press: async (c) => page.keyboard.press(c.key),
  // Waits until the expression is truthy; answers its value.
  wait: async (c) => {
    const handle = await page.waitForFunction(c.js, { timeout: c.timeout || 15000, polling: 50 });
    return handle.jsonValue();
  },
  eval: async (c) => page.evaluate(c.js),
  screenshot: async (c) => {
    await page.screenshot({ path: c.path, fullPage: !!c.fullPage });
  },
  events: async () => events,
};

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let c;
  try {
    c = JSON.parse(line);
  } catch (e) {
    out({ ok: false, error: `bad command: ${e.message}` });
    continue;
  }
  if (c.op === 'quit') break;
  try {
    const fn = commands[c.op];
    if (!fn) throw new Error(`unknown op ${c.op}`);
    out({ ok: true, value: (await fn(c)) ?? null });
  } catch (e) {
    out({ ok: false, error: String(e.message || e) });
  }
}
await browser.close();
process.exit(0);
