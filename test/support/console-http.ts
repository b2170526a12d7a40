/**
 * The console as a script (or an attacker) drives it over HTTP, without a browser: sign-in with the
 * account key or a passkey (a software authenticator, ./authenticator.ts), pages, form posts with
 * the session's CSRF token and the console's Origin, the passkey ceremonies' JSON routes. Every
 * call answers what the service answered; the tests judge it.
 */
import type { SoftAuthenticator } from './authenticator';

/** A signed-in browser, as far as the service can tell: the cookie and the session's CSRF token. */
export interface Signed {
  cookie: string;
  csrf: string;
}

export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
  setCookies: string[];
}

export function consoleClient(base: string) {
  const get = (path: string, signed?: Signed) =>
    fetch(`${base}${path}`, { redirect: 'manual', headers: signed ? { cookie: signed.cookie } : {} });

  const postForm = (path: string, form: Record<string, string>, signed?: Signed) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base, ...(signed ? { cookie: signed.cookie } : {}) },
      body: new URLSearchParams({ ...(signed ? { csrf: signed.csrf } : {}), ...form }).toString(),
    });

  const postJson = async (path: string, body: Record<string, unknown>, signed?: Signed): Promise<JsonAnswer> => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', origin: base, ...(signed ? { cookie: signed.cookie } : {}) },
      body: JSON.stringify({ ...(signed ? { csrf: signed.csrf } : {}), ...body }),
    });
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { text };
    }
    return { status: res.status, body: parsed, setCookies: res.headers.getSetCookie() };
  };

  /** The session a Set-Cookie started, with its CSRF token read off the Overview; undefined when none was set. */
  const sessionOf = async (setCookies: string[]): Promise<Signed | undefined> => {
    const value = /^(?:__Host-)?console=([^;]+)/.exec(setCookies[0] ?? '')?.[1];
    if (!value) return undefined;
    const cookie = `console=${value}`;
    const page = await (await get('/console', { cookie, csrf: '' })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
    return csrf ? { cookie, csrf } : undefined;
  };

  return {
    get,
    postForm,
    postJson,

    /** `Sign in with account key`: the session, or undefined (with the status) when refused. */
    async signInWithKey(accountKey: string): Promise<Signed | undefined> {
      const res = await postForm('/console/login', { accountKey });
      return res.status === 303 ? sessionOf(res.headers.getSetCookie()) : undefined;
    },

    /** Sign-up with `device`'s new passkey: the session it starts (the welcome page then shows the account key once). */
    async signUp(device: SoftAuthenticator, name = ''): Promise<Signed | undefined> {
      const options = await postJson('/console/signup/options', { name });
      if (options.status !== 200) return undefined;
      const verify = await postJson('/console/signup/verify', { response: device.register(String(options.body.challenge)) });
      return verify.status === 200 ? sessionOf(verify.setCookies) : undefined;
    },

    /** The account key /console/welcome shows once, after a sign-up. */
    async welcomeKey(signed: Signed): Promise<string | undefined> {
      return /uk_live_[A-Za-z0-9]+/.exec(await (await get('/console/welcome', signed)).text())?.[0];
    },

    /** Whether the session still opens the Overview (else it is sent to sign in). */
    async signedIn(signed: Signed | undefined): Promise<boolean> {
      return signed !== undefined && (await get('/console', signed)).status === 200;
    },

    /** `Sign in with a passkey`, answered by `device`: the session, or undefined when refused. */
    async signInWithPasskey(device: SoftAuthenticator): Promise<Signed | undefined> {
      const options = await postJson('/console/login/options', {});
      if (options.status !== 200) return undefined;
      const verify = await postJson('/console/login/verify', { response: device.assert(String(options.body.challenge)) });
      return verify.status === 200 ? sessionOf(verify.setCookies) : undefined;
    },

    /**
     * Security's `Add a passkey`: `device` registers, after the fresh proof the session needs — the
     * account key typed again (`accountKey`), or an assertion made for this purpose by an existing
     * passkey (`passkey`). Answers the last step's status and body.
     */
    async addPasskey(
      signed: Signed,
      device: SoftAuthenticator,
      proof: { accountKey?: string; passkey?: SoftAuthenticator },
      name?: string,
    ): Promise<JsonAnswer> {
      let assertion: unknown;
      if (proof.passkey) {
        const ask = await postJson('/console/security/passkeys/proof', {}, signed);
        if (ask.status !== 200) return ask;
        assertion = proof.passkey.assert(String(ask.body.challenge));
      }
      const options = await postJson(
        '/console/security/passkeys/options',
        {
          ...(proof.accountKey !== undefined ? { accountKey: proof.accountKey } : {}),
          ...(assertion ? { assertion } : {}),
          ...(name ? { name } : {}),
        },
        signed,
      );
      if (options.status !== 200) return options;
      return postJson('/console/security/passkeys/verify', { response: device.register(String(options.body.challenge)) }, signed);
    },
  };
}

/** The one-time key rendered with the form that posts to `action` on `page` (functions/console/pages/ui.ts onceField). */
export function formKeyOf(page: string, action: string): string {
  const form = page.split('<form').find((f) => f.includes(`action="${action}"`)) ?? '';
  return /name="idempotencyKey" value="([^"]+)"/.exec(form)?.[1] ?? '';
}
