/**
 * The public words a decision answers with that are not refusals of their own (catalogue.ts has
 * those): an amount's, a text's, a seller's requirements' problem, a webhook delivery's error, a
 * payout's or a purchase's failure reason, the facilitator's refusal message. Each is a table keyed
 * by the problem's code, so a decision names the code and the words come from here. A leaf, like
 * the catalogue: it imports nothing.
 */

/** Why an amount literal is refused (core/money.ts AmountError's reason), after the field's name: `amount must be a number`. */
export const AMOUNT_PROBLEMS = {
  number: 'must be a number',
  positive: 'must be greater than 0',
  tooManyDecimals: (decimals: number, currency: string) => `has more than ${decimals} decimal places for ${currency}`,
  /** `maximum` as the currency's decimal text. */
  tooLarge: (maximum: string) => `must not exceed ${maximum}`,
} as const;
export type AmountProblem = keyof typeof AMOUNT_PROBLEMS;

/** Why free text is refused (core/text.ts), after the field's name: `description must not contain control characters`. */
export const TEXT_PROBLEMS = {
  illFormed: 'must be well-formed unicode text',
  control: 'must not contain control characters',
  bidiControl: 'must not contain bidirectional control characters',
  invisibleOrControl: 'must not contain invisible or control characters',
} as const;
export type TextProblem = keyof typeof TEXT_PROBLEMS;

/**
 * Why a seller's payment requirements are refused (core/purchases.ts `judgeRequirements`): 400
 * `paymentRequirements<.field>: <words>`, except `payToIsService`, whose words are the whole text.
 */
export const REQUIREMENTS_PROBLEMS = {
  notObject: 'must be a JSON object',
  unknownField: 'unknown field',
  unsupportedScheme: 'unsupported scheme',
  unsupportedNetwork: 'unsupported network',
  unsupportedAsset: 'unsupported asset',
  atomicUnits: 'must be a positive integer of atomic units',
  aboveMaximum: 'exceeds the maximum amount',
  belowMinimum: 'below the minimum amount',
  invalidAddress: 'invalid address',
  required: 'required',
  timeout: (max: number) => `must be an integer from 1 to ${max}`,
  serviceKey: 'must not be a key of this service',
  feePayerIsPayTo: 'must not be payTo',
  memoBytes: (maxBytes: number) => `must be a string of 1 to ${maxBytes} bytes`,
  /** A payTo that is one of the service's own wallets (paying an agent here is a charge). */
  payToIsService: 'pay agents of this service with a charge',
} as const;
export type RequirementsProblemCode = keyof typeof REQUIREMENTS_PROBLEMS;

/** One refused field of a seller's requirements, as data: `field` is its path below `paymentRequirements` (`''`, `.extra.feePayer`). */
export type RequirementsProblem = {
  [C in RequirementsProblemCode]: (typeof REQUIREMENTS_PROBLEMS)[C] extends (...args: infer A) => string
    ? { field: string; code: C; args: A }
    : { field: string; code: C };
}[RequirementsProblemCode];

/** The 400 text of a seller's requirements refused. */
export function requirementsProblemText(problem: RequirementsProblem): string {
  const words: string | ((...a: never[]) => string) = REQUIREMENTS_PROBLEMS[problem.code];
  const why = typeof words === 'string' ? words : (words as (...a: unknown[]) => string)(...('args' in problem ? problem.args : []));
  return problem.code === 'payToIsService' ? why : `paymentRequirements${problem.field}: ${why}`;
}

/**
 * Why a webhook delivery attempt failed before or at the receiver (webhooks/sender.ts): the
 * delivery's public `error` (GET /v1/webhooks/{id}/deliveries, the console's deliveries page).
 */
export const DELIVERY_ERRORS = {
  invalidUrl: 'invalid url',
  unsupportedScheme: 'unsupported scheme',
  addressNotAllowed: (host: string) => `${host} is not an allowed address`,
  resolvesToNotAllowed: (host: string) => `${host} resolves to an address that is not allowed`,
  redirect: (status: number) => `redirect not followed (${status})`,
  answered: (status: number) => `receiver answered ${status}`,
  timedOut: (ms: number) => `timed out after ${ms} ms`,
} as const;

/** Why a rail refused to pay a payout (rails/*.rail.ts): the payout's public `failureReason` (GET /v1/payouts/{id}, `payout.failed`). */
export const PAYOUT_FAILURE_REASONS = {
  wrongCurrency: (rail: string, pays: string, currency: string) => `${rail} rail pays ${pays}, not ${currency}`,
  /** `unit`: cents, micro-USDC. */
  netAmountNotWhole: (unit: string) => `net amount must be a positive whole number of ${unit}`,
  invalidPaypalAccount: 'invalid paypal account',
  invalidSolanaAddress: 'invalid solana address',
  destinationIsHotWallet: 'destination is the platform hot wallet',
  destinationIsMint: 'destination is the USDC mint',
  /** A wallet whose USDC token account was closed after the withdrawal was accepted (the withdraw API refuses one without up front). */
  noTokenAccount: 'destination has no USDC token account; create it, or withdraw again with createTokenAccount: true',
  notATokenAccount: 'destination token account is not a token account of this mint',
  tokenAccountFrozen: 'destination token account is frozen',
  /** `err`: the chain's error, as JSON. */
  failedOnChain: (err: string) => `transaction failed on chain: ${err}`,
  /** PayPal's error name, and its message if any. */
  paypalRejected: (name: string, message?: string) => `paypal rejected the payout: ${name}${message ? ` (${message})` : ''}`,
  paypalBatch: (batchStatus: string) => `paypal batch ${batchStatus}`,
  /** PayPal's item status, and its error's name if any. */
  paypalItem: (status: string, errorName?: string) => `paypal item ${status}${errorName ? ` (${errorName})` : ''}`,
} as const;

/** Why a purchase (an x402 hold) ended without its transfer: its public `failureReason`. */
export const PURCHASE_FAILURE_REASONS = {
  notSettled: 'not settled by the seller',
} as const;

/**
 * Why the facilitator refuses a payment (POST /x402/verify and /settle): the answer's
 * `invalidMessage` beside the x402 spec's `invalidReason` code (use-cases/x402-facilitator/x402.ts, x402/facilitator.ts).
 */
export const FACILITATOR_REFUSALS = {
  onlyVersion: (version: number) => `only x402 version ${version} is supported`,
  onlyExactScheme: 'only the exact scheme is supported',
  networkMustBe: (network: string) => `network must be ${network}`,
  payToMustBeTreasury: 'payTo must be the service treasury',
  assetMustBeUsdc: 'asset must be the USDC mint',
  sellerMemo: (memo: string) =>
    `paymentRequirements.extra.memo must be "${memo}", this agent's seller memo (GET /api/v1/agents/x402: extra.memo)`,
  amountNotAtomicUnits: 'amount must be a positive integer of atomic units',
  amountAboveMaximum: (maximum: string | number) => `amount must not exceed ${maximum} USDC`,
  amountBelowMinimum: (minimum: string) => `amount must be at least ${minimum} USDC`,
  transactionVersion: 'only legacy and version 0 transactions are accepted',
  feePayerInInstruction: 'the fee payer may not be an account of any instruction',
} as const;

/** A grant scope's entries, refused at creation (core/grant-scope.ts; contracts/grants.ts words them after the field's path). */
export const SCOPE_PROBLEMS = {
  /** A grant scope's host entry (core/grant-scope.ts HostProblem). */
  scopeHost: {
    format: 'must be a host name (api.example.com) or a wildcard (*.example.com)',
    port: 'must not have a port',
    userinfo: 'must not have userinfo (user@)',
    path: 'must not have a path, query or fragment',
    spaces: 'must not contain spaces',
    ip: 'must be a host name, not an IP address',
    wildcard: "may have '*' only as a whole first label over at least two labels (*.example.com)",
  },
  /** A grant scope's payee entry (core/grant-scope.ts PayeeProblem). */
  scopePayee: {
    address: 'must be a Solana address (base58 of 32 bytes)',
    canonical: 'must be written in canonical base58',
  },
  scopeEmpty: 'must name payees or hosts',
} as const;
