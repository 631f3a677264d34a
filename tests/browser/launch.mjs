// Debian's chromium, headless, through puppeteer-core (CHROMIUM or /usr/bin/chromium), for the
// browser tests' scripts. A chromium that cannot start at all prints {"ok": false, "launch":
// true, ...} and exits 3, which the Python side reports as such.
import puppeteer from 'puppeteer-core';

export async function launchChromium({ args = [], ...options } = {}) {
  try {
    return await puppeteer.launch({
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      // Root in a container: no user namespaces for the sandbox; /dev/shm may be small.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', ...args],
      ...options,
    });
  } catch (e) {
    console.log(JSON.stringify({ ok: false, launch: true, error: String(e.message || e) }));
    process.exit(3);
  }
}
