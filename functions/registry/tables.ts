/**
 * The table grants more than one route (or area) shares: what a movement's repository operations need
 * (functions/store/access.ts), named once so the routes that make the same movement are granted the same.
 */
import { combine, uses } from '../store/access';

/** What charging takes (the charge route and the MCP tool): both keys (account or grant), the payer's state, the commit or the refusal. */
export const CHARGE = uses(
  'agentKeyLookup',
  'userKeyLookup',
  'grantKeyLookup',
  'idempotentCommand',
  'readPayerState',
  'commitCharge',
  'recordFailedCharge',
);

export const LIST_CHARGES = uses('agentKeyLookup', 'listCharges', 'readAgentLedger');

export const BALANCE = uses('agentKeyLookup', 'readAgentLedger');

export const WITHDRAW = uses('agentKeyLookup', 'idempotentCommand', 'readAgentLedger', 'readFeeBasis', 'commitWithdrawal');

export const LIST_WITHDRAWALS = uses('agentKeyLookup', 'listPayouts', 'getPayout');

/** Capture or release a hold: the charge read, then one settlement with the kill switch. */
export const CAPTURE = uses('agentKeyLookup', 'idempotentCommand', 'getCharge', 'commitCapture');

export const RELEASE = uses('agentKeyLookup', 'idempotentCommand', 'getCharge', 'commitRelease');

export const REFUND = uses('agentKeyLookup', 'idempotentCommand', 'readChargeAndLedger', 'commitRefund');

/** A user's (or an approval link's) decision on a PENDING charge: found by its marker, or by id once decided. */
export const DECIDE = uses('getPendingCharge', 'getChargeById', 'chargeBeforeSettling');

export const APPROVE = combine(DECIDE, uses('settleApproval', 'settleTabHold'));

export const DECLINE = combine(DECIDE, uses('settleReturn', 'settleTabHold'));

/** A rotation of the account key releases the open charges the old key made (account-key.ts): listed, then each as a decline. */
export const RELEASE_OPEN_CHARGES = combine(DECLINE, uses('listUserCharges'));

/** The approval page's reads: the charge, its agent, and the grant it was made under (revoked or ended: no Approve). */
export const APPROVAL_PAGE = uses('getPendingCharge', 'getChargeById', 'getCharge', 'getAgentById', 'getGrant');

export const WEBHOOKS = {
  create: uses('createWebhook'),
  list: uses('getWebhooks'),
  delete: uses('deleteWebhook'),
  deliveries: uses('getWebhooks', 'listDeliveryAttempts'),
  test: uses('getWebhooks', 'testPingWindow', 'appendOutbox'),
};

export const AGENT = uses('agentKeyLookup');

/**
 * Settling an x402 payment: its claim looked up, claimed, credited once, or ended when it failed on
 * chain; the credit checks the seller's agent item (its kill switch), as a withdrawal does.
 */
export const X402_SETTLE = uses(
  'agentKeyLookup',
  'agentEnabledCheck',
  'idempotentCommand',
  'claimX402Settlement',
  'getX402Settlement',
  'creditX402Settlement',
  'failX402Settlement',
  'bindX402PaymentIdentifier',
);

/** Verifying an x402 payment: a claimed one is refused; its payment identifier bound (no money). */
export const X402_VERIFY = uses('agentKeyLookup', 'getX402Settlement', 'bindX402PaymentIdentifier');

/** x402 purchases (DESIGN §22): a hold made as a charge is, then its payment signed and recorded once. */
export const PURCHASE_TABLE = combine(CHARGE, uses('getCharge', 'recordSignedPurchase'));

export const READ_PURCHASE = uses('agentKeyLookup', 'getCharge', 'recordSignedPurchase');

export const USER = uses('userKeyLookup');

/** Issuing a grant (the user API or the consent page): the agent named, the grant, its key and events, the limit. */
export const ISSUE_GRANT = uses('getAgentById', 'createGrant', 'reclaimExpiredGrants');

/** An agent asks for a grant (the route and the MCP tool), and polls the request, claiming the key once. */
export const REQUEST_GRANT = uses('agentKeyLookup', 'idempotentCommand', 'createGrantRequest');

export const READ_GRANT_REQUEST = uses('agentKeyLookup', 'getGrantRequest', 'claimGrantRequest', 'getGrant');
