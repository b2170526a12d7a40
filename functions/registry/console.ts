/**
 * The console's routes in the operation registry (routes.ts assembles the areas): pages for people
 * (DESIGN §21), not operations of the OpenAPI document, so they carry none (`PageRoute`).
 */
import { combine, uses } from '../store/access';
import type { PageRoute } from './spec';
import { APPROVE, DECLINE, ISSUE_GRANT } from './tables';

/**
 * Signing in and up (the account key's form, the passkey ceremonies): sessions, passkeys,
 * challenges and rate windows, the account key's lookup (sign-in) and the user's creation (sign-up).
 * Nothing that moves money: these are the routes anyone may call without a session.
 */
const CONSOLE_SIGN_IN = uses(
  'createConsoleSession',
  'consoleRateWindow',
  'savePasskey',
  'usePasskey',
  'webauthnChallenge',
  'userKeyLookup',
  'createUser',
  'getUser',
);

/**
 * The console (DESIGN §21, docs/console.md): signing in and up, and what its own pages do: the
 * sessions' reads and ends, Security's passkeys, the Overview's reads, Approvals' decisions (the
 * API's approve and decline).
 */
const CONSOLE_FRAMEWORK = combine(
  CONSOLE_SIGN_IN,
  uses(
    'readConsoleSession',
    'endConsoleSession',
    'endConsoleSessions',
    'listConsoleSessions',
    'listPasskeys',
    'deletePasskey',
    'confirmSessionOpener',
    'listUserCharges',
  ),
  APPROVE,
  DECLINE,
);

/** What the console's pages over money and settings (functions/console/pages) call: the user API's use cases. */
const CONSOLE_PAGES = combine(
  // The one-time key of each money or secret form (functions/console/pages/once.ts): the API's idempotency record.
  uses(
    'idempotentCommand',
    'createTopup',
    'listTopups',
    'getTopup',
    'listGrants',
    'getGrant',
    'revokeGrant',
    'getUserKeyHash',
    'replacePolicy',
    'closeTabs',
    'getAgentById',
    // The Statement (functions/console/pages/statement.ts): the API's statement operation.
    'readStatement',
    // The open tabs above it (pages/open-tabs.ts): the API's list of the payer's tabs.
    'listUserTabs',
    // A row's receipt (pages/receipts.ts): the API's receipt operation reads the settled record.
    'getX402Payment',
    'getPayout',
    'getTopup',
  ),
  uses(
    'rotateUserKey',
    'endAccountCredentials',
    'endConsoleAccess',
    'createUserWebhook',
    'getWebhooks',
    'deleteWebhook',
    'listDeliveryAttempts',
    'getChargeById',
  ),
  ISSUE_GRANT,
);

const CONSOLE = combine(CONSOLE_FRAMEWORK, CONSOLE_PAGES);

/** Both console routes run functions/console/handler.ts: `/console` itself is not matched by `{proxy+}`. */
const CONSOLE_ROUTE = {
  method: 'ANY',
  pages: true,
  public: true,
  table: CONSOLE,
  // Activity, Limits, Overview and the CSV list the payer's charges, and a PENDING `user_approval`
  // charge carries its approval link, derived from the approval secret (use-cases/identity/payers.ts
  // `listMyCharges`). Without it they answered 500 on AWS once a charge waited (issue 38).
  approvalSecret: true,
  publicLinks: true,
  topups: 'open',
  webhookSecrets: true,
  // The Statement links each row's receipt (DESIGN §27): the console signs it for the signed-in payer.
  receipts: 'sign',
} as const;

/**
 * The sign-in and sign-up posts: the same code on routes of their own, so API Gateway throttles them
 * apart from the pages (lib/http-api.ts ROUTE_THROTTLES: a flood of sign-in attempts cannot take the
 * rate signed-in payers' pages need), with only what signing in needs: the public address (the
 * relying party, the one Origin accepted), the sign-in grant, and the approval secret: a passkey
 * ceremony's challenge is stateless until answered, HMAC-bound under a key derived from it
 * (use-cases/identity/webauthn-challenge.ts).
 */
const SIGN_IN_ROUTE = {
  method: 'POST',
  pages: true,
  public: true,
  table: CONSOLE_SIGN_IN,
  publicLinks: true,
  approvalSecret: true,
} as const;

/**
 * The console (docs/console.md): payers' pages, sign-up and sign-in; public, each with its own
 * throttle. The sign-in routes first: the local adapter takes the first route that matches, and
 * API Gateway the most specific, which is the same one.
 */
export const CONSOLE_ROUTES = [
  // POST /console/login: the account key's form.
  { name: 'console-sign-in', path: '/console/login', ...SIGN_IN_ROUTE },
  // POST /console/login/options and /verify: the passkey sign-in.
  { name: 'console-passkey-sign-in', path: '/console/login/{proxy+}', ...SIGN_IN_ROUTE },
  // POST /console/signup/options and /verify: the passkey sign-up.
  { name: 'console-sign-up', path: '/console/signup/{proxy+}', ...SIGN_IN_ROUTE },
  { name: 'console', path: '/console', ...CONSOLE_ROUTE },
  { name: 'console-pages', path: '/console/{proxy+}', ...CONSOLE_ROUTE },
] as const satisfies readonly PageRoute[];
