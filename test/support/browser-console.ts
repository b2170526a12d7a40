/**
 * The console browser tests' one fixture (DESIGN §21; test/browser/console*.e2e.test.ts): the
 * file's own table and a local stack whose console lives at `http://localhost:<port>` (a passkey's
 * relying party cannot be an IP address), the packaged Chromium (test/support/browser.ts), and a
 * page signed in with an account key. Each file used to declare the same hooks; a difference
 * between them (a browser left open, a stack stopped before its audit) was a difference nobody
 * meant.
 *
 * A browser per test by default: the packaged Chromium runs single-process, and a second context
 * in one browser was seen to lose the cookie a passkey sign-up had just set. A file that walks one
 * person through the console in one test asks for one browser for the file.
 */
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { freePort } from '../../bin/local/local-server';
import { launchBrowser } from './browser';
import { startTestStack, type TestStack, type TestStackArgs } from './stack';
import { createTestTable } from './table';

export type ConsoleStack = TestStack & { base: string };

/** A test stack whose console lives at http://localhost:<port> (PUBLIC_BASE_URL). */
export async function startConsoleStack(
  env: Record<string, string> = {},
  options: Omit<NonNullable<TestStackArgs[1]>, 'port' | 'publicBaseUrl'> = {},
): Promise<ConsoleStack> {
  const port = await freePort();
  const base = `http://localhost:${port}`;
  const t = await startTestStack(env, { ...options, port, publicBaseUrl: base });
  return Object.assign(t, { base });
}

/** Signs in with the account key on /console/login, and waits for the page it leads to. */
export async function signInWithAccountKey(page: Page, base: string, accountKey: string, next?: string): Promise<void> {
  await page.goto(`${base}/console/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  await page.getByLabel('Account key').fill(accountKey);
  await Promise.all([
    page.waitForURL((url) => !url.pathname.startsWith('/console/login')),
    page.getByRole('button', { name: 'Sign in with account key' }).click(),
  ]);
}

export interface UseBrowserOptions {
  /** `test` (default): a fresh browser for each test, closed after it; `file`: one for the file. */
  browserPer?: 'test' | 'file';
}

export interface BrowserFixture {
  /** The browser of the test now running (or of the file): usable inside a test or hook once launched. */
  readonly browser: Browser;
  /** A new context of the browser and a page in it. */
  newPage(options?: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }>;
}

export interface ConsoleStackFixture extends BrowserFixture {
  /** The stack: usable inside a test or hook once `beforeAll` has started it (reading it earlier throws). */
  readonly t: ConsoleStack;
  /** A new page signed in with `accountKey` (on /console/login, as a person does), at `next` if given. */
  signedInPage(accountKey: string, next?: string, options?: BrowserContextOptions): Promise<{ context: BrowserContext; page: Page }>;
}

/** A stand-in for an object made in a hook: reading it before the hook ran names the mistake. */
function later<T extends object>(what: string, get: () => T | undefined): T {
  return new Proxy({} as T, {
    get(_, property) {
      const target = get();
      if (!target) throw new Error(`${what} is read before the hook that makes it ran (.${String(property)})`);
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The packaged Chromium as a fixture, per test or per file (see the header). */
export function useBrowser({ browserPer = 'test' }: UseBrowserOptions = {}): BrowserFixture {
  let browser: Browser | undefined;
  if (browserPer === 'test') {
    beforeEach(async () => {
      browser = await launchBrowser();
    });
    afterEach(async () => {
      await browser?.close();
      browser = undefined;
    });
  } else {
    beforeAll(async () => {
      browser = await launchBrowser();
    });
    afterAll(async () => {
      await browser?.close();
    });
  }
  const fixture: BrowserFixture = {
    browser: later('the browser', () => browser),
    async newPage(options) {
      if (!browser) throw new Error('a page is asked for before the browser was launched');
      const context = await browser.newContext(options);
      return { context, page: await context.newPage() };
    },
  };
  return fixture;
}

/**
 * The console file's stack and browser: its own table and the stack before the file's tests, the
 * stack stopped (its grant check included) after them. Call `auditAfterAll()` after it, as after `useTestStack`: hooks run in the order declared.
 */
export function useConsoleStack(
  options: UseBrowserOptions & { env?: Record<string, string>; stack?: Omit<NonNullable<TestStackArgs[1]>, 'port' | 'publicBaseUrl'> } = {},
): ConsoleStackFixture {
  let started: ConsoleStack | undefined;
  beforeAll(async () => {
    await createTestTable();
    started = await startConsoleStack(options.env, options.stack);
  });
  const browser = useBrowser(options);
  afterAll(async () => started?.stack.stop());
  const t = later('the console stack', () => started);
  return {
    t,
    browser: browser.browser,
    newPage: browser.newPage,
    async signedInPage(accountKey, next, contextOptions) {
      const opened = await browser.newPage(contextOptions);
      await signInWithAccountKey(opened.page, t.base, accountKey, next);
      return opened;
    },
  };
}
