/**
 * The catalogue of public messages: every refusal the service answers, by code, with its status
 * and its exact text (the spec's and DESIGN's strings, byte for byte) and the headers it carries.
 * Code names a refusal by its code (messages/refusal.ts); one renderer (contracts/outcome.ts) turns
 * a refusal into the HTTP answer `{"error": text}`, the MCP tool error and the CLI's failure; the
 * OpenAPI document's error examples are these texts. A leaf: it imports nothing, so every layer,
 * the domain included, may name a refusal, and no layer below the adapters knows a status.
 *
 * A text that depends on something (a limit, a field) is a function of it; the caller passes it.
 *
 * The rule: every public word is here. A decision names its problem by a table's key (a refusal
 * code, an AMOUNT_PROBLEMS or REQUIREMENTS_PROBLEMS key…) and the words come from the table; no
 * message literal is written elsewhere (test/messages/no-literals.test.ts reads the cleaned folders
 * for one), and no code compares words: it compares codes. Internal errors' messages (logs, alarms)
 * are not public words.
 *
 * The words a decision answers with that are not refusals of their own (an amount's problem, a
 * payout's failure reason…) are in problems.ts.
 */

export interface RefusalEntry {
  readonly status: number;
  readonly text: string | ((...args: never[]) => string);
  /** Retry-After seconds the answer carries; a refusal may carry its own instead (a rate's wait). */
  readonly retryAfter?: number;
  /** Other headers the answer carries. */
  readonly headers?: Readonly<Record<string, string>>;
  /** For a refusal about one request field (`aboutField`): the field's path, and the words after it. */
  readonly field?: string;
  readonly separator?: string;
  readonly problem?: (...args: never[]) => string;
}

/**
 * A refusal about one request field, worded `<field><separator><problem>` ("url must be an https
 * URL"). The field and the problem are kept apart, so a page can name the field by its own label
 * (console/pages/ui.ts) without reading the text.
 */
function aboutField<A extends unknown[]>(field: string, problem: (...args: A) => string, separator = ' ') {
  return { field, separator, problem, text: (...args: A) => `${field}${separator}${problem(...args)}` };
}

/**
 * One field's problem as data (contracts/validation.ts makes it from a schema's issue, a refusal
 * `aboutField` from its entry): the API words it with the field's JSON path and the schema's units
 * (`describeProblems`), a page with its own labels and units.
 */
export interface FieldProblem {
  /** The field's JSON path joined with dots (`limits.perCharge`); `body` for the request itself. */
  readonly field: string;
  /** `required` and `unknown` are worded alike everywhere; a bound may be shown in other units. */
  readonly kind: 'required' | 'unknown' | 'atLeast' | 'atMost' | 'other';
  /** The bound of `atLeast` / `atMost`, in the schema's units (seconds, say). */
  readonly bound?: number;
  /** The API's words after the field's name ("must be one of USD, USDC"). */
  readonly words: string;
  /** Between the field's name and its words: a space, or ": " for a refusal worded so. */
  readonly separator: string;
}

/**
 * The words of a request field's problem, after the field's name: the schemas (contracts/) and
 * their issues' wording (contracts/validation.ts) say these and no others, and a page words a
 * bound in its own units with them.
 */
export const FIELD_PROBLEMS = {
  required: 'is required',
  unknown: 'unknown field:',
  /** A body that is no problem in particular (a schema that refused without an issue). */
  invalidRequest: 'invalid request',
  notEmpty: 'must not be empty',
  /** `what` with its article: "a string", "an integer", "a JSON object". */
  ofType: (what: string) => `must be ${what}`,
  oneOf: (values: readonly string[]) => `must be one of ${values.join(', ')}`,
  atLeast: (bound: number | string) => `must be at least ${bound}`,
  atMost: (bound: number | string) => `must be at most ${bound}`,
  atLeastCharacters: (bound: number | string) => `must be at least ${bound} characters`,
  atMostCharacters: (bound: number | string) => `must be at most ${bound} characters`,
  email: 'must be a valid email address',
  httpUrl: 'must be a valid http(s) URL',
  number: 'must be a number',
  wholeNumber: 'must be a whole number',
  positiveInteger: 'must be a positive integer',
  agentId: 'must be an agent id',
  holdOnlyWithoutCapture: 'applies only with capture: false',
  onlyForUsdcWithdrawals: 'is only valid for USDC withdrawals',
  requiredForUsd: 'is required for USD',
  dateOrTime: 'must be a date (2026-11-29) or a UTC time (2026-11-29T09:30:00Z)',
  notAfterTo: 'must not be after to',
} as const;

export const REFUSALS = {
  // --- 400: the request as sent is refused; nothing changed ---
  /** A request that fails its schema: the text is the first problem (contracts/validation.ts `describeProblems`), the refusal keeps them all as data. */
  invalidInput: { status: 400, text: (problem: string) => problem },
  invalidJsonBody: { status: 400, text: 'invalid json body' },
  /** An amount literal its currency does not take (core/money.ts AmountError's reason). */
  invalidAmount: { status: 400, text: (reason: string) => `amount ${reason}` },
  /** A form field given twice (which one would count is anyone's guess). */
  fieldGivenTwice: { status: 400, text: (field: string) => `${field} is given more than once` },
  missingIdempotencyKey: { status: 400, text: 'missing Idempotency-key' },
  invalidIdempotencyKey: { status: 400, text: 'Idempotency-Key must be 1-255 printable ASCII characters' },
  cursorInvalid: { status: 400, text: 'cursor is invalid' },
  pageTooDeep: { status: 400, text: (depth: number) => `page × limit must be at most ${depth}: follow nextCursor to read further` },
  grantCurrencyMismatch: { status: 400, text: 'currency does not match the grant' },
  amountExceedsAuthorized: { status: 400, text: 'amount exceeds authorized amount' },
  amountExceedsRefundable: { status: 400, text: 'amount exceeds refundable amount' },
  amountTooSmallForFees: { status: 400, text: 'amount too small to cover fees' },
  /** A withdrawal's balance check (docs/payouts.md orders it among the 400s). */
  withdrawalInsufficientBalance: { status: 400, text: 'insufficient balance' },
  payoutInProgress: { status: 400, text: 'payout already in progress' },
  noUsdcTokenAccount: { status: 400, text: 'destination has no USDC token account' },
  /** A withdrawal's destination its currency's network cannot pay (core/withdrawals.ts destinationProblem). */
  invalidSolanaAddress: { status: 400, text: 'invalid solana address' },
  /** An x402 refund asking past what is left of its payment (DESIGN §28). */
  refundExceedsPayment: { status: 400, text: 'refund exceeds payment' },
  /** An x402 payment whose payer is not a wallet the hot wallet can pay (an off-curve address, or one of the service's own). */
  refundPayerNotAWallet: { status: 400, text: "the payment's payer is not a wallet a refund can be sent to" },
  invalidPaypalAccount: { status: 400, text: 'invalid paypal account' },
  creditPastBalanceLimit: { status: 400, text: 'amount would take the balance past its limit' },
  policyAgentUnknown: { status: 400, text: (agentId: string) => `agents.${agentId} is not a registered agent` },
  grantAgentNotFound: { status: 400, ...aboutField('agentId', () => 'agent not found', ': ') },
  unknownEventType: {
    status: 400,
    ...aboutField(
      'events',
      (type: string, owner: string, types: readonly string[]) => `unknown event type "${type}" (${owner} events: ${types.join(', ')})`,
      ': ',
    ),
  },
  /** A webhook endpoint URL's shape (core/webhooks.ts webhookUrlProblem). */
  webhookUrlTooLong: { status: 400, ...aboutField('url', (max: number) => `must be at most ${max} characters`) },
  webhookUrlInvalid: { status: 400, ...aboutField('url', () => 'must be a valid https URL') },
  webhookUrlNotHttps: { status: 400, ...aboutField('url', () => 'must be an https URL') },
  /** Where the stage allows loopback endpoints (local runs). */
  webhookUrlNotHttpsOrLoopback: { status: 400, ...aboutField('url', () => 'must be an https URL (or http://127.0.0.1 locally)') },
  webhookUrlCredentials: { status: 400, ...aboutField('url', () => 'must not contain credentials') },
  webhookUrlFragment: { status: 400, ...aboutField('url', () => 'must not contain a fragment') },
  urlHostUnresolved: { status: 400, ...aboutField('url', () => 'host does not resolve') },
  urlNotPublic: { status: 400, ...aboutField('url', () => 'must resolve to a public address') },
  invalidWebhookSignature: { status: 400, text: 'invalid webhook signature' },
  paypalHeaderMissing: { status: 400, text: (header: string) => `missing ${header} header` },
  paypalTransmissionIdInvalid: { status: 400, text: 'invalid paypal-transmission-id header' },
  paypalCertUrlInvalid: { status: 400, text: 'paypal-cert-url is not a PayPal certificate URL' },
  paypalTransmissionStale: { status: 400, text: 'paypal-transmission-time is not within 5 minutes' },
  /** A field the request may not carry, where no schema names it (a schema's own words it the same: contracts/validation.ts). */
  unknownField: { status: 400, text: (field: string) => `unknown field: ${field}` },
  /** An x402 purchase without the seller's requirements, or with a `resource` that is not one (use-cases/x402-purchases/purchases.ts). */
  paymentRequirementsRequired: { status: 400, text: 'paymentRequirements is required' },
  purchaseResourceNotObject: { status: 400, text: 'resource must be a JSON object' },
  purchaseResourceUrlInvalid: { status: 400, text: 'resource.url must be a valid http(s) URL' },
  purchaseResourceDescriptionInvalid: { status: 400, text: 'resource.description must be a string of at most 500 characters' },
  /** An x402 purchase body of another protocol version (use-cases/x402-purchases/purchases.ts). */
  x402VersionUnsupported: { status: 400, text: (version: number) => `x402Version: only x402 version ${version} is supported` },
  /** A purchase receipt's `transaction` that is not a transaction signature. */
  invalidTransactionSignature: { status: 400, text: 'transaction must be a base58 transaction signature' },
  /** An x402 payment-identifier extension whose id is malformed (use-cases/x402-facilitator/x402-policy.ts); `field` is the extension's path. */
  paymentIdentifierInvalid: {
    status: 400,
    text: (field: string) => `${field}.info.id must be 16-128 characters: letters, digits, "-" and "_"`,
  },
  /** An x402 payment-identifier extension whose `required` is not a boolean, or that requires an id it lacks. */
  paymentIdentifierRequiredFlagInvalid: { status: 400, text: (field: string) => `${field}.info.required must be a boolean` },
  paymentIdentifierMissing: { status: 400, text: (field: string) => `${field}.info.id is required` },
  /** The consent page's Allow with a key that is not a current account key (the page again, nothing changed). */
  invalidAccountKey: { status: 400, text: 'invalid account key' },

  // --- 401: no credential the route takes, or one that is not (or no longer) valid ---
  invalidOrDisabledAgentKey: { status: 401, text: 'invalid or disabled agent key' },
  invalidAgentKey: { status: 401, text: 'invalid agent key' },
  invalidAgent: { status: 401, text: 'invalid agent' },
  invalidUserKey: { status: 401, text: 'invalid user key' },
  invalidAdminKey: { status: 401, text: 'invalid admin key' },
  /**
   * No key in the header the route reads it from (absent, empty, or sent under another name:
   * `x-api-key`, `agent-key`…): the answer names the header to send (DESIGN §24). A key that is
   * there but wrong keeps the route's own message above.
   */
  missingAgentKeyHeader: { status: 401, text: 'missing x-agent-key header' },
  missingUserKeyHeader: { status: 401, text: 'missing x-user-key header' },
  missingAdminKeyHeader: { status: 401, text: 'missing x-admin-key header' },

  // --- 402: the money is not there (or not allowed to move); a FAILED charge is kept ---
  insufficientBalance: { status: 402, text: 'insufficient balance' },
  spendingLimitExceeded: { status: 402, text: 'spending limit exceeded' },

  // --- 403: authenticated, but this may not happen ---
  /** A console form (or a consent form sent as a signed-in payer) without the session's CSRF token or the console's Origin (docs/console.md). */
  consoleFormRefused: { status: 403, text: 'this form has expired or came from another site' },
  grantForAnotherAgent: { status: 403, text: 'grant is for another agent' },
  agentBlockedByUser: { status: 403, text: 'agent blocked by user' },
  grantRevoked: { status: 403, text: 'grant revoked' },
  /** A purchase (or a plain charge) outside its grant's scope (core/grant-scope.ts); a FAILED charge is kept. */
  payeeNotAllowedByGrant: { status: 403, text: 'payee not allowed by grant' },
  hostNotAllowedByGrant: { status: 403, text: 'host not allowed by grant' },
  grantExpired: { status: 403, text: 'grant expired' },
  agentDisabled: { status: 403, text: 'agent disabled' },

  // --- 404 ---
  notFound: { status: 404, text: 'not found' },
  chargeNotFound: { status: 404, text: 'charge not found' },
  purchaseNotFound: { status: 404, text: 'purchase not found' },
  x402PaymentNotFound: { status: 404, text: 'payment not found' },
  x402RefundNotFound: { status: 404, text: 'refund not found' },
  tabNotFound: { status: 404, text: 'tab not found' },
  userNotFound: { status: 404, text: 'user not found' },
  agentNotFound: { status: 404, text: 'agent not found' },
  payoutNotFound: { status: 404, text: 'payout not found' },
  topupNotFound: { status: 404, text: 'topup not found' },
  /** No receipt: no settled movement of this id that the caller was a party to (unknown, not settled yet, or another's: one answer). */
  receiptNotFound: { status: 404, text: 'receipt not found' },
  grantNotFound: { status: 404, text: 'grant not found' },
  grantRequestNotFound: { status: 404, text: 'grant request not found' },
  webhookNotFound: { status: 404, text: 'webhook not found' },

  /** An MCP tools/call naming no tool of tools/list (a tool error, as MCP words it). */
  unknownTool: { status: 404, text: (name: string) => `unknown tool: ${name}` },

  // --- 405 ---
  mcpPostOnly: {
    status: 405,
    text: 'method not allowed: this MCP server takes POST only (stateless, no event stream)',
    headers: { allow: 'POST' },
  },

  // --- 409: the state does not allow it (now); some may be retried after Retry-After ---
  idempotencyInProgress: { status: 409, text: 'request with this Idempotency-Key is in progress', retryAfter: 1 },
  chargeExpired: { status: 409, text: 'charge expired' },
  /** An x402 payment-identifier already used with another payment for this agent (docs/x402.md). */
  /** An x402 purchase's receipt for a purchase that is not (or no longer) waiting for its transfer (docs/x402.md). */
  purchaseNotAwaitingSettlement: { status: 409, text: 'purchase is not awaiting settlement' },
  /** A receipt naming a transaction that is not this purchase's payment at confirmed. */
  purchaseTransactionNotFound: { status: 409, text: "transaction not found: not on chain at confirmed, or not this purchase's payment" },
  /** The operator's resolve-purchase (use-cases/x402-purchases/purchase-reconcile.ts resolvePurchase): what it will not settle, and why. */
  purchaseEnded: { status: 409, text: (status: string) => `purchase already ended: ${status}` },
  purchaseNotSigned: { status: 409, text: 'purchase has no signed payment: it ends as any hold does (approval, release, expiry)' },
  purchaseMayStillLand: {
    status: 409,
    text: (finalized: number, lastValid: number) =>
      `purchase's payment may still land: finalized block height ${finalized} is not past its last valid block height ${lastValid}; try again in a minute`,
  },
  purchaseSearchIncomplete: {
    status: 409,
    text: 'a transaction that may be this payment could not be read (an RPC node behind the one that listed it): try again',
  },
  paymentIdentifierConflict: { status: 409, text: 'this payment identifier was used with another payment' },
  chargeNotPending: { status: 409, text: 'charge is not pending' },
  tabLimitExceeded: { status: 409, text: 'tab limit exceeded' },
  tabNotOpen: { status: 409, text: 'tab is not open' },
  chargeAwaitsApproval: { status: 409, text: 'charge awaits user approval' },
  chargeNotRefundable: { status: 409, text: 'charge is not refundable' },
  chargeChanging: { status: 409, text: 'charge is changing, retry', retryAfter: 1 },
  agentBalanceLimit: { status: 409, text: 'agent balance limit reached, withdraw first' },
  userBalanceLimit: { status: 409, text: 'user balance limit reached' },
  agentNameTaken: { status: 409, text: 'agent name already taken' },
  agentKeyRotatedConcurrently: { status: 409, text: 'agent key was rotated concurrently, retry with the new key' },
  userKeyRotatedConcurrently: { status: 409, text: 'user key was rotated concurrently, retry with the new key' },
  /** The operator's rotation of a payer's key lost to another one, every round. */
  userKeyRotationRaced: { status: 409, text: 'user key was rotated concurrently, retry', retryAfter: 1 },
  userBalanceChanging: { status: 409, text: 'user balance is changing too fast, retry', retryAfter: 1 },
  balanceChangedWhileWithdrawing: { status: 409, text: 'balance changed while withdrawing, retry', retryAfter: 1 },
  payoutNotHeld: { status: 409, text: 'payout is not held' },
  grantChanging: { status: 409, text: 'grant is changing, retry', retryAfter: 1 },
  grantLimit: { status: 409, text: (max: number) => `grant limit reached: at most ${max} active grants` },
  webhookLimit: { status: 409, text: (max: number) => `webhook limit reached: at most ${max} endpoints` },
  topupLimit: { status: 409, text: (max: number) => `topup limit reached: at most ${max} open top-ups` },

  // --- 413, 415, 422, 429 ---
  bodyTooLarge: { status: 413, text: 'request body too large' },
  unsupportedMediaType: { status: 415, text: (expected: string) => `content-type must be ${expected}` },
  idempotencyMismatch: { status: 422, text: 'idempotency key reused with different request' },
  /** Retry-After: the seconds until the window has room again (the refusal carries them). */
  tooManyTestEvents: { status: 429, text: 'too many test events' },

  // --- the console (docs/console.md): sign-up, sign-in, passkeys ---
  /** A console POST that is not the form (or the passkey script's JSON) its page sends. */
  consoleFormExpected: { status: 400, text: 'a form was expected' },
  consoleFormTooLarge: { status: 400, text: 'the form is too large' },
  consoleJsonExpected: { status: 400, text: 'content-type must be application/json' },
  consoleJsonTooLarge: { status: 400, text: 'request body too large' },
  /** A console form without its one-time key (console/pages/once.ts): a page kept from before the field existed. */
  consoleFormKeyInvalid: { status: 400, text: 'this form has expired: reload the page and try again' },
  /** A console amount field that is not a plain decimal ("1,000.50", "$5"); `label` is the field's. */
  consoleAmountInvalid: { status: 400, text: (label: string) => `${label} must be a number such as 25 or 25.50` },
  consoleAmountRequired: { status: 400, text: 'Amount is required' },
  consoleWholeNumberInvalid: { status: 400, text: (label: string) => `${label} must be a whole number` },
  consoleApprovalWindowInvalid: { status: 400, text: 'Approval window (minutes) must be a number of minutes such as 15' },
  consoleNotAnAgentId: { status: 400, text: 'that is not an agent id' },
  /** An Activity filter (query parameter) that is not one of the form's choices; `filter` is its name. */
  consoleFilterInvalid: { status: 400, text: (filter: string) => `the filter ${filter} is not valid: choose it again from the form` },
  /** The passkey script's request after the session ended (a page answers with the sign-in page instead). */
  consoleSessionEnded: { status: 401, text: 'your session has ended: sign in again' },
  /** A console POST without the console's Origin or the session's CSRF token: the script's answer, and the page's. */
  consoleForbidden: { status: 403, text: 'forbidden' },
  consoleFormForbidden: {
    status: 403,
    text: 'This form has expired or was sent from another site, so nothing was changed. Go back, reload the page and try again.',
  },
  consoleNoSuchPage: { status: 404, text: 'There is no such page.' },
  consoleNoSuchFile: { status: 404, text: 'There is no such file.' },
  consoleMethodNotAllowed: { status: 405, text: 'This address takes GET and POST only.', headers: { allow: 'GET, POST' } },
  invalidPasskeyResponse: { status: 400, text: 'invalid passkey response' },
  consoleInvalidAccountKey: { status: 401, text: 'invalid account key' },
  passkeyResponseMissing: { status: 401, text: 'invalid passkey response' },
  passkeyChallengeGone: { status: 401, text: 'this passkey request has expired or was already used, try again' },
  passkeyNotAccepted: { status: 401, text: 'this passkey was not accepted' },
  passkeyUnknown: { status: 401, text: 'this passkey is not registered here' },
  /** Adding a passkey in a session the account key opened: the key typed again is the fresh proof (DESIGN §24). */
  passkeyProofKeyRequired: { status: 400, text: 'to add a passkey, type your account key again' },
  /** Adding a passkey in a passkey session: an assertion by one of the payer's passkeys, made for this, is the fresh proof. */
  passkeyProofAssertionRequired: { status: 400, text: 'to add a passkey, confirm with one of your passkeys first' },
  signUpClosed: { status: 403, text: 'sign-up is closed: ask the operator for an account' },
  passkeyNotFound: { status: 404, text: 'passkey not found' },
  lastPasskey: {
    status: 409,
    text: 'this is your only passkey: add another one, or sign in once with your account key, before you remove it',
  },
  /** The refusal carries its own Retry-After (the rate window's end). */
  tooManySignIns: { status: 429, text: 'too many failed sign-ins from this address, try again in a minute' },
  tooManySignUps: { status: 429, text: 'too many sign-ups from this address, try again later' },

  // --- 5xx: nothing changed; retry ---
  internalError: { status: 500, text: 'internal error' },
  /** The stdio MCP server's API (BASE_URL) redirected: never followed, the agent key would go along. */
  apiRedirected: {
    status: 502,
    text: (base: string) => `the API at ${base} answered with a redirect, which is not followed: set BASE_URL to the API's own address`,
  },
  apiUnreachable: { status: 502, text: (base: string) => `the API at ${base} is unreachable` },
  serviceBusy: { status: 503, text: 'service busy, retry later', retryAfter: 1 },
  tableUnreachable: { status: 503, text: 'table unreachable', retryAfter: 5 },
  solanaUnavailable: { status: 503, text: 'solana network unavailable, retry later', retryAfter: 5 },
  paymentProviderUnavailable: { status: 503, text: 'payment provider unavailable, retry later', retryAfter: 5 },
  usdcTopupsUnavailable: { status: 503, text: 'USDC top-ups are not available yet', retryAfter: 3600 },
  x402Unavailable: { status: 503, text: 'x402 is not available yet', retryAfter: 3600 },
} as const satisfies Record<string, RefusalEntry>;

export type RefusalCode = keyof typeof REFUSALS;

/** What a refusal's text is made of: nothing for a fixed text, else its function's parameters. */
export type RefusalArgs<C extends RefusalCode> = (typeof REFUSALS)[C]['text'] extends (...args: infer A) => string ? A : [];

/** The exact public text of a refusal. */
export function refusalText<C extends RefusalCode>(code: C, ...args: RefusalArgs<C>): string {
  const text: RefusalEntry['text'] = REFUSALS[code].text;
  return typeof text === 'string' ? text : (text as (...a: unknown[]) => string)(...args);
}

/** The status a refusal is answered with. */
export const refusalStatus = (code: RefusalCode): number => REFUSALS[code].status;
