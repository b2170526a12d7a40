/**
 * A charge request's outcome and its one rendering: the answer sent, stored under its
 * Idempotency-Key and replayed byte for byte. Beside the other contracts because both the use case
 * (which stores the answer in the charge's own transaction) and the operation (which renders the
 * outcome it returns) read it.
 */
import type { Charge } from '../core/charges';
import type { Tab } from '../core/tabs';
import { refuse } from '../messages/refusal';
import type { Rendered } from './api';
import { renderRefusal } from './outcome';
import { tabView } from './tab-views';
import { chargeView, purchaseView } from './views';

/** The refusals that keep a FAILED charge (its failureReason is the refusal's text). */
export type ChargeRefusal =
  | 'agentBlockedByUser'
  | 'spendingLimitExceeded'
  | 'insufficientBalance'
  | 'payeeNotAllowedByGrant'
  | 'hostNotAllowedByGrant';

/**
 * What a charge request decided: a charge made (201), one waiting for its payer (202, with the
 * approval link: null for a grant key's charge, which the agent never gets; the record keeps the
 * link without its token), or a refusal that keeps a FAILED charge.
 */
export type ChargeOutcome =
  | { kind: 'created'; charge: Charge }
  | { kind: 'awaitsApproval'; charge: Charge; approvalUrl: string | null; storedUrl?: string }
  | { kind: 'refused'; code: ChargeRefusal }
  /**
   * An x402 purchase's hold, answered as the purchase (201, or 202 waiting for its payer): the
   * charge as written, so the purchase builds on it (use-cases/x402-purchases/purchases.ts signs its payment and
   * answers this same outcome with the payment in the charge) without reading it back.
   */
  | { kind: 'purchase'; charge: Charge; awaitsApproval: boolean }
  /**
   * A tab's opening (DESIGN §29): its hold, answered as the tab (201 OPEN; 202 PENDING_APPROVAL with
   * the approval link, null for a grant key's, whose link reaches the payer only).
   */
  | { kind: 'tab'; charge: Charge; tab: Tab; approvalUrl: string | null; storedUrl?: string };

/**
 * The one rendering of a charge request's outcome, sent and stored under its Idempotency-Key; a
 * charge made SUCCESS carries its receipt link on `baseUrl` (DESIGN §27), stored with it.
 */
export function renderCharge(outcome: ChargeOutcome, baseUrl: string): Rendered {
  if (outcome.kind === 'refused') {
    const { status, text } = renderRefusal(refuse(outcome.code));
    return { statusCode: status, body: { error: text } };
  }
  if (outcome.kind === 'tab') {
    const view = tabView(outcome.tab);
    if (outcome.tab.status === 'OPEN') return { statusCode: 201, body: view };
    return {
      statusCode: 202,
      body: { ...view, approvalUrl: outcome.approvalUrl },
      ...(outcome.storedUrl === undefined ? {} : { stored: { ...view, approvalUrl: outcome.storedUrl } }),
    };
  }
  if (outcome.kind === 'purchase') return { statusCode: outcome.awaitsApproval ? 202 : 201, body: purchaseView(outcome.charge, baseUrl) };
  const view = chargeView(outcome.charge, baseUrl);
  if (outcome.kind === 'created') return { statusCode: 201, body: view };
  return {
    statusCode: 202,
    body: { ...view, approvalUrl: outcome.approvalUrl },
    ...(outcome.storedUrl === undefined ? {} : { stored: { ...view, approvalUrl: outcome.storedUrl } }),
  };
}
