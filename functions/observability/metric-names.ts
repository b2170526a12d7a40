/**
 * The names the service's metrics are published under, shared by the emitters (functions/) and
 * the alarms (lib/monitoring.ts). Plain constants only: the CDK app imports this file, and must
 * not pull in the Powertools metrics runtime.
 */

/** Namespace of every custom metric of the service. */
export const METRICS_NAMESPACE = 'AgentPaymentService';
/** The `service` dimension, and the logger's service name. */
export const SERVICE_NAME = 'agent-payment-service';
/**
 * Gauge the reconciler emits after each sweep: payouts still PROCESSING for longer than
 * RECONCILE_PROCESSING_AFTER_SECONDS (0 when there are none). lib/monitoring.ts alarms on it.
 */
export const STUCK_PAYOUTS_METRIC = 'StuckPayouts';
/**
 * Gauge the reconciler emits with StuckPayouts: of those, the refunds of x402 payments (DESIGN §28;
 * 0 when none). A refund waits mostly on the hot wallet's USDC or SOL (PlatformFundsError), and a
 * buyer is owed it: lib/monitoring.ts alarms on it (docs/operating/runbooks.md).
 */
export const STUCK_X402_REFUNDS_METRIC = 'StuckX402Refunds';
/**
 * Gauge the charge sweeper emits after each run (functions/sweeper/handler.ts): seconds past its
 * `expiresAt` of the oldest due PENDING charge when the run started (0 when none). lib/monitoring.ts
 * alarms on it (SweeperLag).
 */
export const SWEEPER_LAG_METRIC = 'SweeperLagSeconds';
/**
 * Gauge the daily ledger audit emits (functions/ledger-audit/handler.ts): how many problems the
 * audit found (0 when the ledger holds). No data point for a day is also an alarm: the audit died.
 */
export const LEDGER_AUDIT_PROBLEMS_METRIC = 'LedgerAuditProblems';
/**
 * Counted by a CloudWatch metric filter (lib/monitoring.ts) from the worker's and reconciler's
 * log lines whose `error.name` is a rail error only an operator can cure.
 */
export const RAIL_NEEDS_OPERATOR_METRIC = 'RailNeedsOperator';
/**
 * The `error.name`s that metric filter counts (functions/rails/errors.ts): PlatformFundsError (top
 * up the hot wallet or the PayPal balance), RailConfigError (secret, mint or credentials wrong),
 * RailAmbiguousAnswerError (PayPal answered something that does not say whether money moved: look
 * the payout up by hand). lib/monitoring.ts should build its filter from this list.
 */
export const OPERATOR_RAIL_ERRORS = ['PlatformFundsError', 'RailConfigError', 'RailAmbiguousAnswerError'] as const;

/** Dimensions of every metric: `service` and `stage` (alarms match this set exactly). */
export const metricDimensions = (stage: string) => ({ service: SERVICE_NAME, stage });

// Top-ups (docs/topups.md).
/**
 * Counted by a log metric filter (lib/monitoring.ts) from the watcher's and the PayPal webhook's
 * log lines `unmatched top-up payment` (functions/use-cases/topups/topup-credit.ts UNMATCHED_LOG_MESSAGE):
 * money reached the platform that credits no top-up; an operator must look at the UNMATCHED# item.
 */
export const UNMATCHED_TOPUP_PAYMENTS_METRIC = 'UnmatchedTopupPayments';
/** The log line's message that filter matches. */
export const UNMATCHED_LOG_MESSAGE = 'unmatched top-up payment';
/**
 * Logged (ERROR) when a rail's credit of an on-chain transaction is refused because another rail
 * credited it already (store/topups/chain-credit.ts): a deposit wallet that is also the x402 treasury, which
 * config load and synth refuse, or an attacker's transfer built to be both. Nothing is credited twice;
 * an operator looks at why (docs/topups.md "One transfer, one credit").
 */
export const TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE = 'transfer already credited by another rail';
/**
 * Counted by log metric filters (lib/monitoring.ts) from the top-up watcher's, x402-settle's and the
 * reconciler's log lines TRANSFER_CREDITED_ELSEWHERE_LOG_MESSAGE: the CHAINCREDIT# guard refused a
 * second credit of one on-chain transaction. lib/monitoring.ts alarms on the first one.
 */
export const TRANSFERS_CREDITED_ELSEWHERE_METRIC = 'TransfersCreditedElsewhere';
/**
 * Counted by a log metric filter (lib/monitoring.ts) from the watcher's and the PayPal webhook's
 * log lines `top-up failed` (TOPUP_FAILED_LOG_MESSAGE): a top-up ended FAILED because PayPal
 * captured another currency or kept the capture PENDING past the window (docs/topups.md). Money
 * may be at the platform that credits nobody: an operator looks at the capture in PayPal.
 */
export const FAILED_TOPUPS_METRIC = 'FailedTopups';
/** The log line's message that filter matches. */
export const TOPUP_FAILED_LOG_MESSAGE = 'top-up failed';
/**
 * Counted by a log metric filter (lib/monitoring.ts) from the PayPal webhook's log lines
 * `top-up reversed` (TOPUP_REVERSED_LOG_MESSAGE): PayPal took money back from a top-up
 * (PAYMENT.CAPTURE.REVERSED / REFUNDED). `outcome` says what was done: `reversed` (the payer
 * debited, any shortfall owed), or why nothing could be (a capture never credited, more than was
 * credited, another currency): every one is worth an operator's look.
 */
export const TOPUP_REVERSALS_METRIC = 'TopupReversals';
/** The log line's message that filter matches. */
export const TOPUP_REVERSED_LOG_MESSAGE = 'top-up reversed';

// x402 (docs/x402.md).
/**
 * Counted by a log metric filter (lib/monitoring.ts) from the reconciler's log lines
 * `x402 settlement not finalized` (X402_FINALITY_MISMATCH_LOG_MESSAGE): a settlement credited at
 * `confirmed` failed on chain or did not reach `finalized` in time. The agent holds a credit the
 * treasury may not: an operator looks at the transaction and, if it is gone, debits by hand.
 */
export const X402_FINALITY_MISMATCHES_METRIC = 'X402FinalityMismatches';
/** The log line's message that filter matches. */
export const X402_FINALITY_MISMATCH_LOG_MESSAGE = 'x402 settlement not finalized';
/**
 * Counted by log metric filters (lib/monitoring.ts) from the x402 settle function's and the
 * reconciler's log lines `x402 credit refused: balance limit` (X402_BALANCE_LIMIT_LOG_MESSAGE):
 * a confirmed x402 payment could not be credited because the agent's USDC balance shards are at
 * their cap (MAX_BALANCE_MINOR). The money is in the treasury and owed to the agent; the settlement
 * stays PENDING and every reconciler run tries the credit again (and logs the line again) until the
 * agent withdraws or the cap is raised.
 */
export const X402_CREDITS_HELD_AT_LIMIT_METRIC = 'X402CreditsHeldAtLimit';
/** The log line's message that filter matches. */
export const X402_BALANCE_LIMIT_LOG_MESSAGE = 'x402 credit refused: balance limit';
/**
 * Emitted once per x402 transaction that landed (credited, or failed on chain: a failed one pays its
 * fee too), by x402-settle or the reconciler, whichever ends the settlement: the lamports the
 * transaction cost the fee payer (5,000 per signature and the priority fee its compute budget asked
 * for; capped by X402_MAX_* in functions/config.ts). lib/monitoring.ts alarms on its hourly sum.
 */
export const X402_FEE_PAYER_LAMPORTS_METRIC = 'X402FeePayerLamports';
/**
 * Gauge the reconciler emits on each x402 sweep: the hot wallet's SOL, in lamports. It pays the fees
 * of x402 settlements and of USDC payouts, and the rent of the token accounts payouts create;
 * lib/monitoring.ts alarms when it runs low.
 */
export const HOT_WALLET_LAMPORTS_METRIC = 'HotWalletLamports';
/**
 * Gauge the reconciler emits on each x402 purchase sweep (functions/use-cases/x402-purchases/purchase-reconcile.ts
 * `reconcilePurchases`): how many signed purchases are PENDING past their blockhash because no search
 * of the hot wallet token account's signatures has yet reached back to where their transfer could be
 * (`unsearched`; 0 when none). Counted over the reconciler's whole queue, not only the purchases due
 * this run: one this run could not reach and one waiting out the backoff an earlier run gave it (1
 * min, doubling to 1 h) both count, so the gauge holds while they wait. Each holds the payer's USDC
 * until the agent's receipt, a search that reaches it, or the operator's `resolve-purchase`; anyone
 * can bury purchases that way by spamming the account with transfers. lib/monitoring.ts alarms when
 * it stays above 0 (X402PurchasesUnsearched).
 */
export const X402_PURCHASES_UNSEARCHED_METRIC = 'X402PurchasesUnsearched';
