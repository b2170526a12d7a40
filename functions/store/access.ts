/**
 * What each function may do to the table, by key family (functions/store/table.ts PARTITIONS and
 * INDEX_PARTITIONS): the one source of every function's DynamoDB grant. Routes carry theirs in
 * functions/api/routes.ts (`RouteSpec.table`); the background functions' are here. lib/grants.ts
 * turns a grant into IAM statements (`grantStatements`), each conditioned on
 * `dynamodb:LeadingKeys`; the local stack checks every request a function really sends against
 * the same statements (test/support/table-access.ts), so a store call the grant does not cover
 * fails the tests that make it, as it would fail on AWS.
 *
 * A grant is written from the repository operations a function calls (`STORE`, below): each
 * lists the families its requests touch, so a route's grant reads as what it does.
 */

import { INDEX_PARTITIONS, type IndexPartition, indexFamilyKeys, leadingKeyPattern, PARTITIONS, type Partition } from './table';
import { TAB_STORE } from './tabs/grants';
import { X402_FACILITATOR_STORE } from './x402-facilitator/access';
import { X402_REFUND_STORE } from './x402-refunds/access';

/** A function's access to the table, by key family. */
export interface TableGrant {
  /** GetItem, BatchGetItem, Query of the table. */
  read?: readonly Partition[];
  /** ConditionCheckItem alone: a transaction's condition on an item it never writes (the kill switch). */
  check?: readonly Partition[];
  /** PutItem, UpdateItem (a transaction's Put and Update items too). */
  write?: readonly Partition[];
  /** DeleteItem (a transaction's Delete items too). */
  delete?: readonly Partition[];
  /** Query of an index, by the index's partition-key family. */
  query?: readonly IndexPartition[];
}

/** The IAM actions of each part of a grant. TransactWriteItems has none: each item is its own action. */
export const GRANT_ACTIONS = {
  read: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:Query'],
  check: ['dynamodb:ConditionCheckItem'],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
  delete: ['dynamodb:DeleteItem'],
  query: ['dynamodb:Query'],
} as const satisfies Record<keyof TableGrant, readonly string[]>;

/** One IAM statement of a grant, before ARNs: on the table, or on one index. */
export interface GrantStatement {
  actions: readonly string[];
  /** Undefined: the table itself; else the index's name. */
  index?: string;
  /** `dynamodb:LeadingKeys` patterns (ForAllValues:StringLike), sorted. */
  leadingKeys: readonly string[];
}

const sortedPatterns = (families: readonly string[]) => [...new Set(families.map(leadingKeyPattern))].sort();

/** The statements a grant stands for: one per part it has, one per index it queries. */
export function grantStatements(grant: TableGrant): GrantStatement[] {
  const statements: GrantStatement[] = [];
  for (const part of ['read', 'check', 'write', 'delete'] as const) {
    const families = grant[part] ?? [];
    if (families.length > 0)
      statements.push({ actions: GRANT_ACTIONS[part], leadingKeys: sortedPatterns(families.map((f) => PARTITIONS[f])) });
  }
  const byIndex = new Map<string, string[]>();
  for (const family of grant.query ?? []) {
    // A sharded family's legacy partition too (the sweeper's and watcher's queues read both).
    const { index } = INDEX_PARTITIONS[family];
    byIndex.set(index, [...(byIndex.get(index) ?? []), ...indexFamilyKeys(family)]);
  }
  for (const [index, families] of [...byIndex.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    statements.push({ actions: GRANT_ACTIONS.query, index, leadingKeys: sortedPatterns(families) });
  }
  return statements;
}

/** Grants together: every family any of them has, per part. */
export function combine(...grants: readonly TableGrant[]): TableGrant {
  const out: Record<string, string[]> = {};
  for (const grant of grants) {
    for (const [part, families] of Object.entries(grant) as [keyof TableGrant, readonly string[]][]) {
      out[part] = [...new Set([...(out[part] ?? []), ...families])].sort();
    }
  }
  return out as TableGrant;
}

/**
 * The families each repository operation's requests touch, by the operation's name (the
 * functions of functions/store/*.repository.ts and their helpers). A function's grant is the
 * operations it calls (`uses`): when a repository operation starts touching another family, its
 * entry here changes and every function that calls it gets it; when a function calls another
 * operation, its `uses` list does. The recorded-requests test fails until both are right.
 */
export const STORE = {
  // Authentication (credentials.repository.ts lookupCredentials).
  agentKeyLookup: { read: ['agent'] },
  userKeyLookup: { read: ['userKey'] },
  /** A grant key on a charge (docs/grants.md): its lookup item, in the same BatchGetItem. */
  grantKeyLookup: { read: ['grantKey'] },
  // Idempotency records (use-cases/idempotency.ts): written in each movement's transaction, read
  // back to replay when the condition's old item did not come with the failure, or before one.
  idempotentCommand: { read: ['idempotency'], write: ['idempotency'] },
  // Agents (agent.repository.ts).
  // The agent item's writes carry the balance shards' copy of its kill switch (balance.repository.ts);
  // registration's (createAgent, always disabled) needs none.
  createAgent: { write: ['agent', 'agentName'] },
  getAgentById: { read: ['agent'], query: ['agentById'] },
  setAgentEnabled: { read: ['agent'], write: ['agent', 'agentBalanceShard'], query: ['agentById'] },
  /** The operator's list of agents by state (GSI2): its index partitions only. */
  listAgents: { query: ['agentsByState'] },
  moveAgentKey: { read: ['agent'], write: ['agent', 'agentBalanceShard'], delete: ['agent'] },
  // The kill switch on the agent item: the ConditionCheck of release, refund and withdrawal
  // (charges and captures condition on their shard's copy instead).
  agentEnabledCheck: { check: ['agent'] },
  /**
   * The table stream's fan-out of an operator's edit to the shards (functions/kill-switch/fanout.ts):
   * the agent item read, and checked unchanged in the transaction that writes the shards; where an
   * edit in the console left the item's entry in the operator's list under its old state, that
   * check is an update of the entry (the agent item written: GSI2PK and GSI2SK only).
   */
  killSwitchFanOut: { read: ['agent'], check: ['agent'], write: ['agentBalanceShard', 'agent'] },
  readAgentLedger: { read: ['agentBalanceShard'] },
  // Users (user.repository.ts).
  createUser: { write: ['user', 'userKey'] },
  getUser: { read: ['user'] },
  /** The payer's statement (statement.repository.ts): a page's Queries of their entries, newest first. */
  readStatement: { read: ['statement'] },
  creditUser: { write: ['user', 'credit', 'idempotency', 'statement'] },
  readPayerState: { read: ['user'] },
  replacePolicy: { write: ['user'] },
  rotateUserKey: { write: ['user', 'userKey'], delete: ['userKey'] },
  /** A rotation ends what the old key made (payers.ts rotateAccountKey): every active grant revoked, every user endpoint deleted. */
  endAccountCredentials: { read: ['grant', 'webhook'], write: ['grant', 'grantCount', 'outbox', 'webhookCount'], delete: ['webhook'] },
  /** The operator's rotation reads the current key's hash first (getUserKeyHash). */
  getUserKeyHash: { read: ['user'] },
  // Charges (charge.repository.ts, charge-pending, charge-settlement, charge-read and charge-lifecycle.repository.ts).
  /** With a grant key: the grant item's counters and status too (store/charges/charge-items.ts). */
  /** The kill switch is the credited shard's condition: no check of the agent item. */
  commitCharge: { write: ['user', 'agentBalanceShard', 'charge', 'idempotency', 'pendingCharge', 'outbox', 'grant', 'statement'] },
  /** With a grant key: the grant checked active (a revoked grant's refusal is 401, nothing stored). */
  recordFailedCharge: { write: ['agentBalanceShard', 'charge', 'idempotency', 'outbox'], check: ['user', 'grant'] },
  getCharge: { read: ['charge'] },
  /** An id naming its agent is a GetItem; an older id goes through its GSI1 entry. */
  getChargeById: { read: ['charge'], query: ['chargeById'] },
  listCharges: { read: ['charge'] },
  listUserCharges: { read: ['charge'], query: ['userCharges', 'chargeById'] },
  getPendingCharge: { read: ['pendingCharge'] },
  listDuePending: { query: ['pendingExpiry'] },
  /** Older markers do not carry the whole charge: it is read (chargeBeforeSettling). */
  chargeBeforeSettling: { read: ['charge'] },
  /**
   * settlePending, by how the charge ends. Approve: the held money to the agent's shard (a hold
   * approved instead waits for its capture: the marker is updated). Return (decline, release,
   * expiry): the hold back to the user. Either way the marker is retired as a tombstone, an update
   * (charge-settlement.repository.ts): nothing that settles a charge deletes. Neither reads: the
   * answer is computed from the state the settlement was conditioned on. An approval is conditioned
   * on the agent's kill switch (a shard) and on the grant it was made under being active.
   */
  settleApproval: { write: ['charge', 'pendingCharge', 'user', 'agentBalanceShard', 'outbox'], check: ['agentBalanceShard', 'grant'] },
  /** A hold made under a grant gives what goes back to the grant's counters too. */
  settleReturn: { write: ['charge', 'pendingCharge', 'user', 'outbox', 'grant', 'statement'] },
  /** The agent's capture and release (commitSettlement): with its idempotency record and kill switch (a capture's: its shard's). */
  commitCapture: {
    write: ['charge', 'pendingCharge', 'user', 'agentBalanceShard', 'outbox', 'idempotency', 'grant', 'statement'],
    check: ['grant'],
  },
  commitRelease: { write: ['charge', 'pendingCharge', 'user', 'outbox', 'idempotency', 'grant', 'statement'], check: ['agent'] },
  readChargeAndLedger: { read: ['charge', 'agentBalanceShard'] },
  commitRefund: { write: ['idempotency', 'charge', 'user', 'agentBalanceShard', 'outbox', 'statement'], check: ['agent'] },
  /** The operator's refund of a charge (a disabled agent's earnings back to its payer): the same writes, no kill switch. */
  commitOperatorRefund: { write: ['idempotency', 'charge', 'user', 'agentBalanceShard', 'outbox', 'statement'] },
  // Payouts (payout.repository.ts, payout-inflight.repository.ts, payout-lease.repository.ts).
  /** With the fee basis beside the lock (its partition), conditioned on it as read (readFeeBasis). */
  commitWithdrawal: { write: ['agentBalanceShard', 'payout', 'payoutLock', 'idempotency'], check: ['agent'] },
  readFeeBasis: { read: ['payoutLock'] },
  getPayout: { read: ['payout'] },
  // Held payouts, the operator's (payout-hold.repository.ts): the list, the release, the cancel (a refund of the gross).
  listPayoutsByStatus: { query: ['payoutsInflight'] },
  releaseHeldPayout: { write: ['payout'] },
  cancelHeldPayout: { write: ['payout', 'agentBalanceShard', 'payoutLock', 'idempotency', 'outbox'], delete: ['payoutLock'] },
  listPayouts: { read: ['payout'] },
  listStaleInflight: { query: ['payoutsInflight'] },
  touchPending: { write: ['payout'] },
  /** claimPayout, saveRailState, recordPendingCheck, completePayout and failPayout. */
  /** A FAILED payout gives its gross and fee back to the fee basis beside the lock (an update in its partition). */
  payoutLease: { write: ['payout', 'agentBalanceShard', 'outbox', 'payoutLock'], delete: ['payoutLock'] },
  // Top-ups (topup.repository.ts, topup-completion.repository.ts, topup-watch.repository.ts).
  // The payer's open top-ups counter (at most 10 PENDING): read for the answer, raised by the create.
  createTopup: { read: ['openTopups'], write: ['topup', 'topupReference', 'topupOrder', 'openTopups'] },
  getTopup: { read: ['topup'] },
  listTopups: { read: ['topup'] },
  findTopupByReference: { read: ['topupReference', 'topup'] },
  findTopupByOrder: { read: ['topupOrder', 'topup'] },
  listPendingTopups: { query: ['pendingTopups'] },
  // Ending a PENDING top-up gives its open slot back.
  completeTopup: { write: ['topup', 'topupCredit', 'user', 'credit', 'outbox', 'openTopups', 'statement'] },
  /**
   * The cross-rail credit-once guard (store/topups/chain-credit.ts), in every transaction that credits an
   * on-chain transfer: a USDC top-up's completion (the watcher's; PayPal's writes none) and x402's credit.
   */
  chainCreditGuard: { write: ['chainCredit'] },
  expireTopup: { write: ['topup', 'openTopups'] },
  /** PayPal took a credited top-up back (reversal.repository.ts): read what was credited and the balance, debit once. */
  reverseTopupCredit: { read: ['topupCredit', 'user'], write: ['topupReversal', 'topupCredit', 'user', 'reversal', 'statement'] },
  /** A USDC top-up's own cursor over its reference's signatures (the watcher pages past spam). */
  moveReferenceCursor: { write: ['topup'] },
  /** The cross-rail guard, and the top-up guard of credits made before it (one BatchGetItem). */
  transferCreditedAlready: { read: ['chainCredit', 'topupCredit'] },
  recordUnmatched: { write: ['unmatchedPayment'] },
  isUnmatchedRecorded: { read: ['unmatchedPayment'] },
  depositCursor: { read: ['depositCursor'], write: ['depositCursor'] },
  // Webhooks (webhook.repository.ts, webhook-delivery.repository.ts, outbox.ts).
  /** An agent's endpoint: conditioned on the agent item of the key it is registered with being enabled (a cache may be 30 s behind). */
  createWebhook: { write: ['webhookCount', 'webhook'], check: ['agent'] },
  /** A payer's endpoint: conditioned on the account key it is registered under still being theirs. */
  createUserWebhook: { write: ['webhookCount', 'webhook'], check: ['user'] },
  deleteWebhook: { write: ['webhookCount'], delete: ['webhook'] },
  getWebhooks: { read: ['webhook'] },
  appendOutbox: { write: ['outbox'] },
  /** nextAttemptNumber and recordDeliveryAttempt. */
  deliveryAttempts: { write: ['webhookAttempts', 'webhookDelivery'] },
  /** The endpoint's breaker (claimProbe, recordEndpointFailure, recordEndpointSuccess): its health on the endpoint item. */
  endpointHealth: { write: ['webhook'] },
  /** The endpoint's window of test pings (webhook-test-window.repository.ts). */
  testPingWindow: { write: ['webhookTestWindow'] },
  /** A PayPal transmission seen (paypal-transmission.repository.ts), forgotten again when PayPal could not verify it. */
  paypalTransmission: { write: ['paypalTransmission'] },
  listDeliveryAttempts: { read: ['webhookDelivery'] },
  ...X402_FACILITATOR_STORE,
  ...X402_REFUND_STORE,
  pingTable: { read: ['health'] },
  // Grants (grant.repository.ts): the counter item carries the limit of active grants.
  /** Conditioned on the account key it is made under still being the payer's (a rotation ends every grant). */
  createGrant: { write: ['grantCount', 'grant', 'grantKey', 'outbox'], check: ['user'] },
  /** Expired grants stop counting against the limit when a create finds it reached. */
  reclaimExpiredGrants: { read: ['grant'], write: ['grant', 'grantCount'] },
  getGrant: { read: ['grant'] },
  sendGrantAlert: { write: ['grant', 'outbox'] },
  listGrants: { read: ['grant'] },
  revokeGrant: { read: ['grant'], write: ['grant', 'grantCount', 'outbox'] },
  // Grant requests (grant-request.repository.ts): the request, its consent link's lookup, its moves.
  createGrantRequest: { write: ['grantRequest', 'consent', 'idempotency'] },
  findConsent: { read: ['consent'] },
  getGrantRequest: { read: ['grantRequest'] },
  /** Deny, and approve (in the grant's create transaction). */
  decideGrantRequest: { write: ['grantRequest'] },
  /** approved → claimed, with the asking key's agent item checked enabled (a cache may be 30 s behind). */
  claimGrantRequest: { write: ['grantRequest'], check: ['agent'] },
  // x402 purchases (purchase.repository.ts; their hold is commitCharge's, their ending settlePending's).
  /** The payment signed once: the charge's terms, its marker moved to the reconciler's queue, its signature claimed (one per purchase); checked as a capture (enabled, not blocked, grant active). */
  recordSignedPurchase: { write: ['charge', 'pendingCharge', 'idempotency'], check: ['agentBalanceShard', 'user', 'grant'] },
  listAgentPurchases: { query: ['agentPurchases'] },
  /** The reconciler's queue (listDuePurchases, countUnsearchedPurchases: the gauge). */
  listDuePurchases: { query: ['signedPurchases'] },
  /** A purchase its search could not reach waits out a backoff: its marker moved in the queue (deferPurchaseSearch). */
  deferPurchaseSearch: { write: ['pendingCharge'] },
  /** Captured or released by the chain: the charge, the payer's held money, the marker, the grant's counters, the events. */
  settlePurchase: { write: ['charge', 'pendingCharge', 'user', 'outbox', 'grant', 'statement'] },
  // The console (console-session.repository.ts, console-rate.repository.ts, passkey.repository.ts).
  /** Conditioned on what opens it: the account key's hash on the user item (a passkey sign-in's condition is its counter update, usePasskey). */
  createConsoleSession: { write: ['consoleSession', 'userSessions'], check: ['user'] },
  /** getSession, touchSession and takeWelcomeKey: the session item only. */
  readConsoleSession: { read: ['consoleSession'], write: ['consoleSession'] },
  endConsoleSession: { delete: ['consoleSession', 'userSessions'] },
  /** Sign out everywhere: the payer's sessions listed, each ended; Security lists them with their items (listConsoleSessions: listSessions, readSessions). */
  endConsoleSessions: { read: ['userSessions'], delete: ['consoleSession', 'userSessions'] },
  listConsoleSessions: { read: ['userSessions', 'consoleSession'] },
  consoleRateWindow: { read: ['consoleRate'], write: ['consoleRate'] },
  /** With `user.passkey.added` (its outbox item), conditioned on the proof still standing: the account key (the user item) or the vouching passkey. */
  savePasskey: { write: ['passkey', 'userPasskeys', 'outbox'], check: ['user', 'passkey'] },
  /** Whether what opened a session still stands (confirmSession): the account key's hash, or the passkey. */
  confirmSessionOpener: { read: ['user', 'passkey'] },
  /**
   * A rotation of the account key ends the payer's console access (use-cases/identity/account-key.ts): the
   * passkeys the key stands behind listed and removed, every session listed and ended.
   */
  endConsoleAccess: { read: ['userPasskeys', 'userSessions'], delete: ['passkey', 'userPasskeys', 'consoleSession', 'userSessions'] },
  /** getPasskey and recordPasskeyUse. */
  usePasskey: { read: ['passkey'], write: ['passkey'] },
  /** listPasskeys and markAccountKeySignIn: the payer's passkeys partition. */
  listPasskeys: { read: ['userPasskeys'], write: ['userPasskeys'] },
  deletePasskey: { delete: ['passkey', 'userPasskeys'] },
  /** spendChallenge: a ceremony's answer records its challenge's digest once (a conditional Put); nothing is stored before. */
  webauthnChallenge: { write: ['webauthnChallenge'] },
} as const satisfies Record<string, TableGrant>;

export type StoreOperation = keyof typeof STORE | keyof typeof TAB_STORE;

/** The grant of a function that calls these repository operations. */
export const uses = (...ops: readonly StoreOperation[]): TableGrant => combine(...ops.map((op) => ({ ...STORE, ...TAB_STORE })[op]));

/**
 * The payout worker's whole need: it drives payouts (a lost lease ends in a read of the payout),
 * and reads the payout's agent by id before it pays (a disabled agent's payout is held).
 */
const drivesPayouts = uses('payoutLease', 'getPayout', 'getAgentById', 'x402RefundPayouts');

/** The records a receipt is made from (use-cases/receipts): a charge or purchase, an x402 payment or its refund, a payout, a top-up. */
const readsReceipts = uses('getChargeById', 'getX402Payment', 'getX402Refund', 'getPayout', 'getTopup');

/** The functions that are not routes (declared in lib/: payout-pipeline, charge-sweeper, topup-watcher, webhook-pipeline). */
export const BACKGROUND_GRANTS = {
  'payout-worker': drivesPayouts,
  // Re-sends stale PENDING payouts, and drives stale PROCESSING ones with the worker's code; finishes
  // x402 settlements whose settle died (credits a confirmed one through the settle's own credit path).
  reconciler: combine(
    drivesPayouts,
    uses(
      'listStaleInflight',
      'touchPending',
      'listStaleX402',
      'getX402Settlement',
      'creditX402Settlement',
      'failX402Settlement',
      'deferX402Settlement',
      'idempotentCommand',
      'checkX402Finality',
      // x402 purchases: captured when their transfer is on chain, released when it can no longer land,
      // deferred while its search cannot reach back to them.
      'listDuePurchases',
      'deferPurchaseSearch',
      'getCharge',
      'settlePurchase',
    ),
  ),
  sweeper: uses('listDuePending', 'chargeBeforeSettling', 'settleReturn', 'settleTabHold', 'closeTabs'),
  'topup-watcher': uses(
    'listPendingTopups',
    'findTopupByReference',
    'completeTopup',
    'chainCreditGuard',
    'expireTopup',
    'transferCreditedAlready',
    'recordUnmatched',
    'isUnmatchedRecorded',
    'depositCursor',
    'moveReferenceCursor',
  ),
  // Reads the owners' endpoints, and the settled records whose events carry a receipt (use-cases/receipts).
  // Limit alerts too: reads a grant a refusal names, marks the alert's window on it with its outbox item.
  'webhook-dispatcher': combine(readsReceipts, uses('getWebhooks', 'getGrant', 'sendGrantAlert')),
  // Copies an agent item's kill switch to its balance shards; a disabled agent's open tabs it closes (docs/tabs.md).
  'kill-switch-fanout': uses('killSwitchFanOut', 'closeTabs'),
  // Reads the endpoint, counts and records each attempt. Never money: it calls customers' URLs.
  'webhook-delivery': uses('getWebhooks', 'deliveryAttempts', 'endpointHealth'),
} as const satisfies Record<string, TableGrant>;

export type BackgroundFunction = keyof typeof BACKGROUND_GRANTS;
