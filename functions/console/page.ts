/**
 * The console's page contract (DESIGN §21): the console is a second adapter over the same use cases
 * as `/api/v1/users/me`, never a second path for money. The framework (router, sessions, CSRF and
 * Origin checks, the layout with its navigation, security headers) calls one `ConsolePage` per path
 * and method; a page only ever sees a request that is already signed in and, for a POST, already
 * past the CSRF token and Origin checks. A page returns data — what to show — and never writes
 * headers or cookies itself.
 */
import type { SafeHtml } from '../http/html';
import type { Session } from '../use-cases/identity/console-sessions';

/** The navigation entries, in order; their labels are exact (DESIGN §21). */
export const CONSOLE_NAV = [
  { name: 'overview', label: 'Overview', path: '/console' },
  { name: 'funds', label: 'Add funds', path: '/console/funds' },
  // The statement in Activity's place (DESIGN §26): Activity's URLs redirect to it.
  { name: 'statement', label: 'Statement', path: '/console/statement' },
  { name: 'approvals', label: 'Approvals', path: '/console/approvals' },
  { name: 'grants', label: 'Grants', path: '/console/grants' },
  { name: 'limits', label: 'Limits', path: '/console/limits' },
  { name: 'developers', label: 'Developers', path: '/console/developers' },
  { name: 'security', label: 'Security', path: '/console/security' },
] as const;

export type ConsoleNavName = (typeof CONSOLE_NAV)[number]['name'];

/** Who is signed in, and what a page needs to render forms for them. */
export interface ConsoleSession {
  userId: string;
  /** The session's CSRF token: every form renders it as `<input type="hidden" name="csrf">`. */
  csrfToken: string;
  /** The payer's IANA time zone when the browser said it (a cookie), else undefined (UTC). */
  timeZone?: string;
  /** What opened the session (DESIGN §24): a passkey, or the account key. Undefined in page tests that do not say. */
  openedBy?: 'passkey' | 'accountKey';
  /**
   * A session the account key opened: that key's hash. Its forms act with it, never with a newer
   * key (a rotation ends the session; a form racing the rotation is refused by the key's condition).
   */
  accountKeyHash?: string;
}

export interface ConsoleRequest {
  method: 'GET' | 'POST';
  /** The path without the query string, e.g. `/console/grants`. */
  path: string;
  /** Path parameters of the matched route, e.g. `{ id: 'gr_…' }`. */
  params: Readonly<Record<string, string>>;
  query: Readonly<Record<string, string>>;
  /** The urlencoded form of a POST (the framework has removed `csrf`). */
  form: Readonly<Record<string, string>>;
  /** The public base URL (for links a page shows, e.g. an approval link). */
  baseUrl: string;
  now: Date;
  /** The browser's User-Agent, if it sent one: only for suggesting a name (a passkey's), never a check. */
  userAgent?: string;
  /** The hash of this request's session (Security marks it among the sessions it lists). Undefined in page tests that do not say. */
  sessionHash?: string;
  /**
   * This request's session as the framework has just read it (and touched it, when due): Security
   * lists it from here rather than reading it again. Undefined in page tests that do not say.
   */
  currentSession?: Session;
}

/** What a page answers: the framework renders it inside the layout (or as a redirect/download). */
export type ConsoleResult =
  | {
      kind: 'page';
      /** The `<title>` and `<h1>`. */
      title: string;
      nav: ConsoleNavName;
      body: SafeHtml;
      /** 200 unless the page shows a refusal (e.g. 400 with the form again and the error). */
      status?: number;
    }
  /**
   * After a successful POST: 303 to a GET (post/redirect/get), optionally with a one-shot notice.
   * `signedOut`: the POST ended this very session (Security's `End` on its own row): the cookie is cleared.
   */
  | { kind: 'redirect'; location: string; signedOut?: true }
  | { kind: 'download'; contentType: string; filename: string; body: string };

export type ConsolePage = (session: ConsoleSession, req: ConsoleRequest) => Promise<ConsoleResult>;

/** One console route: the framework matches `path` (`:name` segments become params). */
export interface ConsoleRoute {
  method: 'GET' | 'POST';
  path: string;
  page: ConsolePage;
}
