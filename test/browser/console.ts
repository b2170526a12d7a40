/**
 * What every console browser test needs (DESIGN §21), for the framework's tests and the pages'
 * alike: a local stack whose public base URL is `http://localhost:<port>` (a passkey's relying
 * party cannot be an IP address), a CDP virtual authenticator that creates and uses passkeys,
 * sign-in and sign-up as a person does them, and the quality bars of every page — no sideways
 * scroll at 375 px, no `serious` or `critical` axe-core violation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';

// The stack and the account-key sign-in live with the fixture (test/support/browser-console.ts);
// these files and test/security, test/console import them from here too.
export { type ConsoleStack, signInWithAccountKey, startConsoleStack } from '../support/browser-console';

/**
 * A platform authenticator with resident keys and user verification on the page's target, as
 * DESIGN §21 names it. The CDP session must stay open while the page uses passkeys.
 */
export async function addVirtualAuthenticator(
  context: BrowserContext,
  page: Page,
  /** `internal` (the device's own, one per page) or `usb` (a security key: a second device). */
  transport: 'internal' | 'usb' = 'internal',
): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = (await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport, hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  })) as { authenticatorId: string };
  return { cdp, authenticatorId };
}

/** Signs up with a passkey (the page's authenticator makes it); returns the account key the welcome page shows once. */
export async function signUpWithPasskey(page: Page, base: string, name = ''): Promise<string> {
  await page.goto(`${base}/console/signup`);
  if (name) await page.getByLabel('Name').fill(name);
  await Promise.all([page.waitForURL(`${base}/console/welcome`), page.getByRole('button', { name: 'Create account' }).click()]);
  return (await page.locator('.key').innerText()).trim();
}

/** Signs in with the page's passkey from /console/login. */
export async function signInWithPasskey(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/console/login`);
  await Promise.all([
    page.waitForURL((url) => !url.pathname.startsWith('/console/login')),
    page.getByRole('button', { name: 'Sign in with a passkey' }).click(),
  ]);
}

const AXE = readFileSync(join(__dirname, '..', '..', 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

export interface PageQuality {
  width: number;
  scrollWidth: number;
  innerWidth: number;
  /** `id: impact (n nodes)` of each serious or critical axe-core violation. */
  violations: string[];
}

/**
 * The page's width at `width` px and its serious/critical axe-core violations. axe is evaluated in
 * the page through CDP-free `evaluate` (the CSP's script-src 'self' binds the page's own scripts,
 * not the test's). Expect `{ scrollWidth: innerWidth, violations: [] }`.
 */
export async function pageQuality(page: Page, width: number): Promise<PageQuality> {
  await page.setViewportSize({ width, height: 800 });
  const { scrollWidth, innerWidth } = (await page.evaluate(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  )) as { scrollWidth: number; innerWidth: number };
  const already = await page.evaluate('typeof window.axe !== "undefined"');
  if (!already) await page.evaluate(AXE);
  const results = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
  };
  const violations = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.impact} (${v.nodes.length} nodes: ${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  return { width, scrollWidth, innerWidth, violations };
}

/** Asserts the quality bars of the page now open, at 375 px and at 1280 px; saves screenshots when SCREENSHOTS names a folder. */
export async function expectQualityBars(page: Page, name: string): Promise<void> {
  for (const width of [375, 1280]) {
    const quality = await pageQuality(page, width);
    expect({ name, ...quality }).toEqual({ name, width, scrollWidth: quality.innerWidth, innerWidth: quality.innerWidth, violations: [] });
    const folder = process.env.SCREENSHOTS;
    if (folder) await page.screenshot({ path: join(folder, `${name}-${width}.png`), fullPage: true });
  }
}
