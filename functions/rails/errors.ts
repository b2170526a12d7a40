/**
 * Errors a rail throws. Every throw from `PayoutRail.pay` means "not decided, try again later":
 * the worker leaves the payout as it is and SQS (or the reconciler) calls the rail again. These
 * classes only make the reason readable in logs and metrics; the cause is always kept.
 */

/** The payout network (RPC node, PayPal API) could not be reached or answered 5xx/429/timeout. */
export class RailUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RailUnavailableError';
  }
}

/**
 * The platform's own account cannot fund this payout right now (hot wallet short of USDC or of
 * SOL for fees, PayPal balance too low). Not the agent's fault and not permanent: an operator tops
 * the account up and the retried payout goes through. Alarm on it.
 */
export class PlatformFundsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PlatformFundsError';
  }
}

/** The rail is misconfigured (missing URL, key, mint with the wrong decimals, rejected credentials). */
export class RailConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RailConfigError';
  }
}

/** A saved checkpoint this rail cannot read. Never guessed around: re-signing blindly could pay twice. */
export class CheckpointError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointError';
  }
}

/**
 * The network answered, but not in a way that says whether money moved: a duplicate
 * `sender_batch_id` with no link to the batch PayPal holds, or a 4xx that is not one of PayPal's
 * known definitive refusals. No refund (the money may have gone) and no guess: the payout stays
 * PROCESSING, is retried, and an operator is alarmed (its name is in OPERATOR_RAIL_ERRORS,
 * functions/observability/metric-names.ts) to look the payout up at PayPal.
 */
export class RailAmbiguousAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RailAmbiguousAnswerError';
  }
}
