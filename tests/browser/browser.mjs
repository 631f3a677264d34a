// node browser.mjs PAGE_URL SCREENSHOT: loads the test page in Debian's chromium, headless
// (puppeteer-core, CHROMIUM or /usr/bin/chromium), waits for its result, saves a screenshot and
// prints the result as JSON; exits 1 on failure, 3 if chromium cannot start at all.
import { launchChromium } from './launch.mjs';

const [pageUrl, screenshot] = process.argv.slice(2);
const browser = await launchChromium();
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
