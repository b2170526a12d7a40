/**
 * The console's routes in the operation registry (routes.ts assembles the areas): pages for people
 * (DESIGN §21), not operations of the OpenAPI document, so they carry none (`PageRoute`).
 */
import { combine, uses } from '../store/access';
import type { PageRoute } from './spec';
import { APPROVE, DECLINE, ISSUE_GRANT } from './tables';

/**
 * The console (DESIGN §21, docs/console.md): its sessions, passkeys, challenges and rate windows,
 * the account key's lookup (sign-in) and the user's creation (sign-up), and what its own pages do:
 * the Overview's reads, Approvals' decisions (the API's approve and decline).
 */
const CONSOLE_FRAMEWORK = combine(
  uses(
    'createConsoleSession',
    'readConsoleSession',
    'endConsoleSession',
    'endConsoleSessions',
    'consoleRateWindow',
    'savePasskey',
    'usePasskey',
    'listPasskeys',
    'deletePasskey',
    'confirmSessionOpener',
    'webauthnChallenge',
    'userKeyLookup',
    'createUser',
    'getUser',
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
    'getAgentById',
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
  publicLinks: true,
  topups: 'open',
  webhookSecrets: true,
} as const;

/** The console (docs/console.md): payers' pages, sign-up and sign-in; public, with its own throttle. */
export const CONSOLE_ROUTES = [
  // The console (docs/console.md): payers' pages, sign-up and sign-in; public, with its own throttle.
  { name: 'console', path: '/console', ...CONSOLE_ROUTE },
  { name: 'console-pages', path: '/console/{proxy+}', ...CONSOLE_ROUTE },
] as const satisfies readonly PageRoute[];
