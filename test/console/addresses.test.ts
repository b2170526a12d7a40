/**
 * Where the console is (functions/console/session.ts, functions/http/): its links under the public base URL's path, and
 * its passkeys' relying party (docs/deploy.md "Addresses", docs/console.md "Moving the console").
 * The whole set-ups, in a browser, are test/browser/console-addresses.e2e.test.ts.
 */
import { config, resetForTests } from '../../functions/config';
import { relyingParty } from '../../functions/console/session';
import { html } from '../../functions/http/html';
import { basePath, publicPath } from '../../functions/http/request';
import { underBasePath } from '../../functions/http/response';

const saved = { ...process.env };
afterEach(() => {
  process.env = { ...saved };
  resetForTests();
});

const at = (env: Record<string, string>) => {
  Object.assign(process.env, env);
  resetForTests();
};

describe('the console under a base path', () => {
  it('puts every root-relative link, action and source under it, and nothing a payer or an agent wrote', () => {
    at({ PUBLIC_BASE_URL: 'https://example.com/pay/' });
    expect(basePath()).toBe('/pay');
    const description = 'see <a href="/console/x">';
    const page =
      html`<a href="/console">Overview</a><form method="post" action="/console/logout"></form><script src="/console/assets/p.js"></script>
<a href="https://elsewhere.example/">out</a><a href="//evil.example/">protocol-relative</a><p>${description}</p>`.text;
    const out = underBasePath(page);
    expect(out).toContain('<a href="/pay/console">');
    expect(out).toContain('action="/pay/console/logout"');
    expect(out).toContain('src="/pay/console/assets/p.js"');
    expect(out).toContain('href="https://elsewhere.example/"');
    expect(out).toContain('href="//evil.example/"');
    // Escaped text is not markup: left as it is.
    expect(out).toContain('see &lt;a href=&quot;/console/x&quot;&gt;');
    expect(publicPath('/console/login?next=%2Fconsole')).toBe('/pay/console/login?next=%2Fconsole');
    expect(publicPath('https://example.com/pay/console')).toBe('https://example.com/pay/console');
  });

  it('changes nothing at the root', () => {
    at({ PUBLIC_BASE_URL: 'https://pay.example.com' });
    expect(basePath()).toBe('');
    expect(underBasePath('<a href="/console">x</a>')).toBe('<a href="/console">x</a>');
    expect(publicPath('/console')).toBe('/console');
  });
});

describe('the passkeys’ relying party', () => {
  it('is the public host, or CONSOLE_RP_ID where it is a domain the host is under', () => {
    at({ PUBLIC_BASE_URL: 'https://pay.example.com' });
    expect(relyingParty()).toMatchObject({ id: 'pay.example.com', origin: 'https://pay.example.com' });
    at({ CONSOLE_RP_ID: 'example.com' });
    expect(relyingParty()).toMatchObject({ id: 'example.com', origin: 'https://pay.example.com' });
    at({ CONSOLE_RP_ID: 'other.example.org' });
    expect(() => config()).toThrow(/CONSOLE_RP_ID: must be PUBLIC_BASE_URL's host or a domain it is under/);
    // A name merely ending the same way is not under it.
    at({ CONSOLE_RP_ID: 'ay.example.com' });
    expect(() => config()).toThrow(/CONSOLE_RP_ID/);
  });
});
