/**
 * Sign-up and sign-in with a passkey at each address docs/deploy.md ("Addresses") documents, with
 * the Host and forwarding headers each one delivers to the console's function (issue 38):
 * - the API's own address (execute-api): API Gateway passes the browser's Host;
 * - a custom domain (`domainName`): API Gateway passes the browser's Host, the custom domain's name;
 *   the execute-api address still answers, and a GET there goes to the custom domain
 *   (CONSOLE_HOST_REDIRECT, which the stack sets for this setup alone);
 * - a CDN in front (`publicBaseUrl`), as CloudFront with the managed origin request policy
 *   AllViewerExceptHostHeader delivers: Host is the origin's domain name (an execute-api origin
 *   refuses another), every other viewer header and cookie forwarded, Via and X-Amz-Cf-Id added,
 *   the viewer's address appended to X-Forwarded-For, X-Forwarded-Proto removed. Before the fix the
 *   console sent every request back to the public address, forever;
 * - the same CDN serving the console under a base path (`publicBaseUrl` https://…/pay), the prefix
 *   stripped before the origin (a CloudFront Function, or an API mapping: the function's rawPath
 *   has none). Before the fix the console's links and redirects left the base path.
 * Locally `localhost:<port>` stands for the public host and `127.0.0.1:<port>` for the execute-api one.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { freePort } from '../../bin/local/local-server';
import { auditAfterAll } from '../support/audit';
import { useBrowser } from '../support/browser-console';
import { startTestStack, type TestStack } from '../support/stack';
import { createTestTable } from '../support/table';
import { addVirtualAuthenticator } from './console';

// Each test starts its own stack at its own address; the file shares the table and, per test, a browser.
beforeAll(async () => {
  await createTestTable();
});
const { browser } = useBrowser();
auditAfterAll();

/** A CDN in front of the origin on `originPort`, as CloudFront delivers (see the header); `basePath` is stripped. */
async function startCdn(
  originPort: number,
  basePath = '',
): Promise<{ url: string; delivered: IncomingHttpHeaders[]; stop(): Promise<void> }> {
  const port = await freePort();
  const delivered: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (basePath && !path.startsWith(`${basePath}/`)) {
      res.writeHead(404).end();
      return;
    }
    const headers: IncomingHttpHeaders = { ...req.headers };
    headers.host = `127.0.0.1:${originPort}`;
    delete headers['x-forwarded-proto'];
    headers['x-forwarded-for'] = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    headers.via = '1.1 0123456789abcdef0123456789abcdef.cloudfront.net (CloudFront)';
    headers['x-amz-cf-id'] = randomBytes(42).toString('base64url');
    delivered.push(headers);
    const upstream = httpRequest(
      { host: '127.0.0.1', port: originPort, method: req.method, path: path.slice(basePath.length), headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${port}${basePath}`,
    delivered,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sign-up with a passkey at `base`, the welcome page's key, the Overview; sign-out; sign-in with the passkey. */
async function signUpAndIn(page: Page, base: string, startAt = base): Promise<void> {
  await page.goto(`${startAt}/console/signup`);
  expect(page.url()).toBe(`${base}/console/signup`);
  await page.getByLabel('Name').fill('Ada');
  await Promise.all([page.waitForURL(`${base}/console/welcome`), page.getByRole('button', { name: 'Create account' }).click()]);
  expect(await page.locator('.key').innerText()).toMatch(/^uk_live_/);
  await Promise.all([page.waitForURL(`${base}/console`), page.getByRole('link', { name: 'Continue to the console' }).click()]);
  expect(await page.locator('h1').innerText()).toBe('Overview');
  await Promise.all([page.waitForURL(`${base}/console/login`), page.getByRole('button', { name: 'Sign out' }).click()]);

  // The Statement, in Activity's place (DESIGN §26).
  await page.goto(`${startAt}/console/statement`);
  expect(page.url()).toBe(`${base}/console/login?next=%2Fconsole%2Fstatement`);
  await Promise.all([page.waitForURL(`${base}/console/statement`), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
  expect(await page.locator('h1').innerText()).toBe('Statement');
  // A page's links stay at the console's address.
  await Promise.all([page.waitForURL(`${base}/console/limits`), page.getByRole('link', { name: 'Limits' }).click()]);
}

async function withStack(stack: Promise<TestStack>, work: (t: TestStack) => Promise<void>): Promise<void> {
  const t = await stack;
  try {
    await work(t);
  } finally {
    await t.stack.stop();
  }
}

describe('sign-up and sign-in at each documented address', () => {
  it('at the API’s own address: the Host is the browser’s', async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    await withStack(startTestStack({}, { port, publicBaseUrl: base }), async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await addVirtualAuthenticator(context, page);
      await signUpAndIn(page, base);
    });
  });

  it('at a custom domain, and from the execute-api address, which sends a GET to the custom domain', async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    // What the stack gives the console when the public address is its custom domain.
    await withStack(startTestStack({ CONSOLE_HOST_REDIRECT: '1' }, { port, publicBaseUrl: base }), async () => {
      const context = await browser.newContext();
      const page = await context.newPage();
      await addVirtualAuthenticator(context, page);
      await signUpAndIn(page, base, `http://127.0.0.1:${port}`);
    });
  });

  it('behind a CDN that sends the origin’s Host: no redirect to itself', async () => {
    const port = await freePort();
    const cdn = await startCdn(port);
    try {
      await withStack(startTestStack({}, { port, publicBaseUrl: cdn.url }), async () => {
        const context = await browser.newContext();
        const page = await context.newPage();
        await addVirtualAuthenticator(context, page);
        await signUpAndIn(page, cdn.url);
      });
      // What the console's function was given: the origin's Host, the viewer's Origin and cookie.
      expect(cdn.delivered.every((h) => h.host === `127.0.0.1:${port}` && h['x-forwarded-proto'] === undefined)).toBe(true);
      expect(cdn.delivered.some((h) => h.origin === cdn.url && h.cookie?.includes('console='))).toBe(true);
    } finally {
      await cdn.stop();
    }
  });

  it('behind a CDN under a base path: links, forms, redirects and the passkey script stay under it', async () => {
    const port = await freePort();
    const cdn = await startCdn(port, '/pay');
    try {
      await withStack(startTestStack({}, { port, publicBaseUrl: cdn.url }), async () => {
        const context = await browser.newContext();
        const page = await context.newPage();
        await addVirtualAuthenticator(context, page);
        await signUpAndIn(page, cdn.url);
      });
      expect(cdn.delivered.some((h) => h.origin === `http://localhost:${new URL(cdn.url).port}`)).toBe(true);
    } finally {
      await cdn.stop();
    }
  });
});
