// node browser.mjs PAGE_URL SCREENSHOT: loads the test page in Debian's chromium, headless
// (puppeteer-core, CHROMIUM or /usr/bin/chromium), waits for its result, saves a screenshot and
// prints the result as JSON; exits 1 on failure, 3 if chromium cannot start at all.
import puppeteer from 'puppeteer-core';

const [pageUrl, screenshot] = process.argv.slice(2);
let browser;
try {
  browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // Root in a container: no user namespaces for the sandbox; /dev/shm may be small.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
} catch (e) {
  console.log(JSON.stringify({ ok: false, launch: true, error: String(e.message || e) }));
  process.exit(3);
}
let result;
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(pageUrl);
  await page.waitForFunction(() => window.carrierResult !== undefined, { timeout: 30000 });
  result = await page.evaluate(() => window.carrierResult);
  result.userAgent = await browser.userAgent();
  result.pageErrors = errors;
  await page.screenshot({ path: screenshot });
} catch (e) {
  result = { ok: false, error: String(e.message || e) };
}
await browser.close();
console.log(JSON.stringify(result));
process.exit(result.ok ? 0 : 1);
