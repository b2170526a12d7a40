/**
 * The answers the operator's and the agent's money movements store under their Idempotency-Key
 * (a charge's capture, release or refund, a withdrawal, a held payout's cancel, an operator's
 * credit) and the creations that keep a secret shown once (a registration, an operator's new user):
 * each outcome's one rendering. Beside the other contracts because both the use case (which stores
 * the answer in its own transaction) and the operation (which renders the outcome it returns) read it.
 */
import type { Agent } from '../core/agents';
import { REGISTRATION_MESSAGE } from '../core/agents';
import type { Charge } from '../core/charges';
import type { Payout } from '../core/payouts';
import type { Balances } from '../core/users';
import type { Rendered } from './api';
import { balancesView, chargeView, payoutView, type ReceiptLinks, withdrawalView } from './views';

/**
 * A capture, release or refund answers the charge as it is after it (200), with its receipt links on
 * `baseUrl` (a capture's `receiptUrl`, a refund's `refundReceiptUrl` too, DESIGN §27): the answer
 * stored in the movement's transaction has them, so a replay sends the same links.
 */
export const renderSettledCharge = (charge: Charge, baseUrl: ReceiptLinks): Rendered => ({
  statusCode: 200,
  body: chargeView(charge, baseUrl),
});

/** A withdrawal accepted: the PENDING payout, and whether the agent asked for (and pays) the token account's creation. */
export interface WithdrawalOutcome {
  payout: Payout;
  createsTokenAccount: boolean;
}

export const renderWithdrawal = ({ payout, createsTokenAccount }: WithdrawalOutcome): Rendered => ({
  statusCode: 200,
  body: withdrawalView(payout, { accountCreationFee: createsTokenAccount }),
});

/**
 * A payout as it is now (200): a held payout cancelled (FAILED) or released (in flight again). Never
 * COMPLETED here, so never a receipt to link: no links, and the operator's routes that answer it make none.
 */
export const renderPayout = (payout: Payout): Rendered => ({ statusCode: 200, body: payoutView(payout, undefined) });

/** An agent registered: its key, shown once (201). */
export interface Registration {
  agent: Agent;
  apiKey: string;
}

export const renderRegistration = ({ agent, apiKey }: Registration): Rendered => ({
  statusCode: 201,
  body: { message: REGISTRATION_MESSAGE, apiKey, enabled: false, agentId: agent.id },
});

/** A user created with its account key, shown once (201). */
export interface CreatedUser {
  userId: string;
  userKey: string;
}

export const renderCreatedUser = (created: CreatedUser): Rendered => ({
  statusCode: 201,
  body: { id: created.userId, userKey: created.userKey },
});

/** A user's balances right after an operator's credit (200). */
export interface CreditedUser {
  userId: string;
  balances: Balances;
}

export const renderCredited = ({ userId, balances }: CreditedUser): Rendered => ({
  statusCode: 200,
  body: { id: userId, balances: balancesView(balances) },
});
