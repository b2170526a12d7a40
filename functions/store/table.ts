/**
 * The single table's shape and every key builder. Shared by the repositories, the local runner
 * (which creates the table) and the CDK stack (which declares it), so the three cannot drift.
 * Item layout and why: docs/data-model.md.
 */
import { createHash } from 'node:crypto';

export const TABLE_KEYS = { partitionKey: 'PK', sortKey: 'SK' } as const;
export const GSI1 = { indexName: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' } as const;
/** A user's charges across agents, newest first (the user's history and authorization log). */
export const GSI2 = { indexName: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' } as const;
/** Every global secondary index, for the local runner and the CDK stack to declare alike. */
export const INDEXES = [GSI1, GSI2] as const;
/** TTL attribute (epoch seconds) on idempotency records. */
export const TTL_ATTRIBUTE = 'ttl';

/**
 * The partition-key families of the table, one per key builder below (same name): the prefix
 * every partition key the builder makes starts with (ending in `#`), or the whole key when the
 * builder makes only one. The functions' IAM grants are written in these names
 * (functions/store/access.ts) and become `dynamodb:LeadingKeys` patterns (`leadingKeyPattern`),
 * so a grant and the keys it stands for cannot drift apart. A new kind of item is a new entry
 * here; docs/operating/least-privilege.md says what else it takes.
 */
export const PARTITIONS = {
  agent: 'AGENTKEY#',
  agentName: 'AGENTNAME#',
  agentBalanceShard: 'AGENTBAL#',
  user: 'USER#',
  userKey: 'USERKEY#',
  credit: 'CREDITS#',
  statement: 'STMT#',
  charge: 'CHARGES#',
  pendingCharge: 'PENDINGCHARGE#',
  payout: 'PAYOUTS#',
  payoutLock: 'PAYOUTLOCK#',
  topup: 'TOPUPS#',
  topupReference: 'TOPUPREF#',
  topupOrder: 'TOPUPORDER#',
  openTopups: 'OPENTOPUPS#',
  topupCredit: 'TOPUPCREDIT#',
  paypalTransmission: 'PAYPALTX#',
  topupReversal: 'TOPUPREVERSAL#',
  reversal: 'REVERSALS#',
  unmatchedPayment: 'UNMATCHED#',
  depositCursor: 'DEPOSITCURSOR#',
  chainCredit: 'CHAINCREDIT#',
  idempotency: 'IDEM#',
  health: 'HEALTH',
  webhook: 'WEBHOOKS#',
  webhookCount: 'WEBHOOKCOUNT#',
  webhookDelivery: 'WHDELIVERY#',
  webhookAttempts: 'WHATTEMPTS#',
  webhookTestWindow: 'WHTESTS#',
  outbox: 'OUTBOX#',
  grant: 'GRANTS#',
  grantKey: 'GRANTKEY#',
  grantCount: 'GRANTCOUNT#',
  grantRequest: 'GRANTREQ#',
  consent: 'CONSENT#',
  x402Settlement: 'X402TX#',
  x402Payment: 'X402PAY#',
  x402PaymentIdentifier: 'X402PID#',
  x402Refund: 'X402REFUND#',
  consoleSession: 'CONSOLESESSION#',
  userSessions: 'USERSESSIONS#',
  passkey: 'PASSKEY#',
  userPasskeys: 'USERPASSKEYS#',
  webauthnChallenge: 'WACHALLENGE#',
  consoleRate: 'CONSOLERATE#',
  tab: 'TAB#',
  userTabs: 'USERTABS#',
  agentTabs: 'AGENTTABS#',
} as const;
export type Partition = keyof typeof PARTITIONS;

/** The id prefix of an x402 refund (core/ids.ts `newX402RefundId`). */
export const X402_REFUND_PREFIX = 'xr';

/**
 * The partition-key families of the indexes: for a Query on an index, IAM's `dynamodb:LeadingKeys`
 * is the index's partition key, so a reader is granted these, per index.
 */
export const INDEX_PARTITIONS = {
  /** An agent item by agentId (`keys.agentIndex`). */
  agentById: { index: GSI1.indexName, key: 'AGENT#' },
  /** A charge by id alone (`keys.chargeIndex`). */
  chargeById: { index: GSI1.indexName, key: 'CHARGE#' },
  /**
   * PENDING charges by expiry: the sweeper's queue (charge-pending.repository.ts), in
   * EXPIRY_SHARDS partitions (`keys.pendingExpiryIndex`); `legacy`: the one partition of markers
   * written before it was sharded, still read by the sweeper.
   */
  pendingExpiry: { index: GSI1.indexName, key: 'PENDING_EXPIRY#', legacy: 'PENDING_EXPIRY' },
  /** Payouts in flight by status and age: the reconciler's (payout-inflight.repository.ts). */
  payoutsInflight: { index: GSI1.indexName, key: 'PAYOUTS_INFLIGHT' },
  /** PENDING top-ups by expiry: the watcher's work list (`keys.pendingTopupIndex`), sharded and with its legacy partition as pendingExpiry. */
  pendingTopups: { index: GSI1.indexName, key: 'PENDINGTOPUPS#', legacy: 'PENDINGTOPUPS' },
  /** Payments that matched no top-up (`keys.unmatchedIndex`). */
  unmatched: { index: GSI1.indexName, key: 'UNMATCHED' },
  /** A user's charges across agents (`keys.userChargeIndex`). */
  userCharges: { index: GSI2.indexName, key: 'USERCHARGES#' },
  /** Agents by their `enabled` flag, newest first: the operator's list (`keys.agentStateIndex`). */
  agentsByState: { index: GSI2.indexName, key: 'AGENTSBYSTATE#' },
  /** x402 settlements still PENDING, by age: the reconciler's (`keys.x402PendingIndex`). */
  x402Pending: { index: GSI1.indexName, key: 'X402PENDING' },
  /** x402 settlements CREDITED at `confirmed` and not yet seen `finalized`, by credit time: the reconciler's second check. */
  x402Unfinalized: { index: GSI1.indexName, key: 'X402UNFINAL' },
  /** An agent's x402 purchases, newest first (`keys.purchaseIndex`, on the hold's charge item). */
  agentPurchases: { index: GSI1.indexName, key: 'PURCHASES#' },
  /**
   * PENDING purchases whose payment was signed, by when they are next due (their signing time, later
   * a search's backoff): the reconciler's queue (`keys.signedPurchaseIndex`, on the marker).
   */
  signedPurchases: { index: GSI1.indexName, key: 'PURCHASES_SIGNED' },
} as const;
export type IndexPartition = keyof typeof INDEX_PARTITIONS;

/** The partition keys of an index family as granted: its own, and the legacy one it still reads. */
export const indexFamilyKeys = (family: IndexPartition): string[] => {
  const entry: { key: string; legacy?: string } = INDEX_PARTITIONS[family];
  return entry.legacy === undefined ? [entry.key] : [entry.key, entry.legacy];
};

/** The IAM pattern (StringLike) of a family: `PREFIX#*` for a prefix, the key itself otherwise. */
export const leadingKeyPattern = (family: string): string => (family.endsWith('#') ? `${family}*` : family);

/**
 * How many partitions one agent's charges are spread over (DESIGN §18). A partition DynamoDB
 * cannot split by a time-ordered sort key takes about 1,000 write units a second; 32 take 32
 * times that, and 1,000 charges of one agent put about 3% in each (none near the bench's 10%).
 * Part of the key layout, not a setting: changing it moves every charge's key (docs/data-model.md).
 */
export const CHARGE_SHARDS = 32;
/** Partitions of the sweeper's expiry index and of the top-up watcher's work list (each read whole every run). */
export const EXPIRY_SHARDS = 16;

/**
 * The shard of `id` among `shards`: the first four bytes of its SHA-256, so anyone who knows the
 * id finds its partition with no lookup, and monotonic ids (ULIDs that differ in the last
 * character) still spread evenly.
 */
export const shardOf = (id: string, shards: number): number => createHash('sha256').update(id).digest().readUInt32BE(0) % shards;

const P = PARTITIONS;
const I = INDEX_PARTITIONS;

const agentStatePartition = (enabled: boolean) => `${I.agentsByState.key}${enabled ? 'enabled' : 'disabled'}`;

export const keys = {
  /** The agent item: operators flip `enabled` here. Keyed by the hash of the agent's key. */
  agent: (keyHash: string) => ({ PK: `${P.agent}${keyHash}`, SK: 'AGENT' }),
  /** GSI1 entry that finds an agent item by agentId. */
  agentIndex: (agentId: string) => ({ GSI1PK: `${I.agentById.key}${agentId}`, GSI1SK: 'AGENT' }),
  /**
   * GSI2 entry that lists the agent among the enabled or the disabled ones, sorted by id (= creation
   * order). It follows the item's `enabled` (true, or anything else): every write of the flag sets
   * it, and the kill switch's fan-out mends it after an edit in the console.
   */
  agentStateIndex: (agentId: string, enabled: boolean) => ({ GSI2PK: agentStatePartition(enabled), GSI2SK: agentId }),
  agentStatePartition,
  /** One reservation per look-alike skeleton (core/text.ts `nameSkeleton`), so no two agents' names can be confused. */
  agentName: (skeleton: string) => ({ PK: `${P.agentName}${skeleton}`, SK: 'AGENTNAME' }),
  /** One write shard of an agent's earned balance and charge count. */
  agentBalanceShard: (agentId: string, shard: number) => ({ PK: `${P.agentBalanceShard}${agentId}#${shard}`, SK: 'BAL' }),
  user: (userId: string) => ({ PK: `${P.user}${userId}`, SK: 'USER' }),
  userKey: (keyHash: string) => ({ PK: `${P.userKey}${keyHash}`, SK: 'USERKEY' }),
  /** Append-only record of each admin credit (the audit's source of money in). */
  credit: (userId: string, recordId: string) => ({ PK: `${P.credit}${userId}`, SK: recordId }),
  /** One movement of a payer's balance on their statement, sorted by a ULID (= time order): docs/statement.md. */
  statement: (userId: string, entryId: string) => ({ PK: `${P.statement}${userId}`, SK: entryId }),
  /**
   * One agent's charges, spread over CHARGE_SHARDS partitions by a hash of the id, each sorted by
   * id (= creation order); listings merge them (charge-read.repository.ts).
   */
  charge: (agentId: string, chargeId: string) => ({ PK: `${P.charge}${agentId}#${shardOf(chargeId, CHARGE_SHARDS)}`, SK: chargeId }),
  /** Where charges written before the sharding stay: read as one more shard (docs/operating/runbooks.md, "Sharded charge partitions"). */
  legacyCharge: (agentId: string, chargeId: string) => ({ PK: `${P.charge}${agentId}`, SK: chargeId }),
  legacyChargePartition: (agentId: string) => `${P.charge}${agentId}`,
  /** Every partition that may hold a charge of the agent: the shards, then the legacy one. */
  chargePartitions: (agentId: string) => [
    ...Array.from({ length: CHARGE_SHARDS }, (_, s) => `${P.charge}${agentId}#${s}`),
    `${P.charge}${agentId}`,
  ],
  /** GSI1 entry that finds a charge of the earlier id form by id alone (new charges name their agent instead: core/ids.ts). */
  chargeIndex: (chargeId: string) => ({ GSI1PK: `${I.chargeById.key}${chargeId}`, GSI1SK: 'CHARGE' }),
  /** GSI2 entry that lists a user's charges across agents, sorted by id (= creation order). */
  userChargeIndex: (userId: string, chargeId: string) => ({ GSI2PK: `${I.userCharges.key}${userId}`, GSI2SK: chargeId }),
  userChargePartition: (userId: string) => `${I.userCharges.key}${userId}`,
  /**
   * Exists exactly while a charge is PENDING: where approve/decline/capture find it by id alone
   * (strongly consistent), and, through its GSI1 entry, where the sweeper finds it when due.
   */
  pendingCharge: (chargeId: string) => ({ PK: `${P.pendingCharge}${chargeId}`, SK: 'PENDING' }),
  /** The marker's GSI1 entry: the sweeper's queue, by expiry, in EXPIRY_SHARDS partitions. */
  pendingExpiryIndex: (expiresAt: string, chargeId: string) => ({
    GSI1PK: `${I.pendingExpiry.key}${shardOf(chargeId, EXPIRY_SHARDS)}`,
    GSI1SK: `${expiresAt}#${chargeId}`,
  }),
  /** GSI1 entry of a purchase's charge item: the agent's purchases by id (a charge item of the new id form has no other). */
  purchaseIndex: (agentId: string, chargeId: string) => ({ GSI1PK: `${I.agentPurchases.key}${agentId}`, GSI1SK: chargeId }),
  /**
   * GSI1 entry of a signed purchase's marker, instead of the sweeper's: the chain ends it, not the
   * clock. Sorted by when the reconciler next looks for it (`dueAt`: its signing time, then a backoff
   * while its search cannot reach it), so a query up to now skips the ones not due.
   */
  signedPurchaseIndex: (dueAt: string, chargeId: string) => ({ GSI1PK: I.signedPurchases.key, GSI1SK: `${dueAt}#${chargeId}` }),
  /** Every partition of the sweeper's queue: the shards, then the legacy one. */
  pendingExpiryPartitions: () => [...Array.from({ length: EXPIRY_SHARDS }, (_, s) => `${I.pendingExpiry.key}${s}`), I.pendingExpiry.legacy],
  /** All payouts of one agent, sorted by id (= creation order). */
  // A refund of an x402 payment (`xr…`, DESIGN §28) is paid as a payout by the same worker, lease
  // and reconciler, but lives in a partition of its own, so a withdrawal list never shows one.
  payout: (agentId: string, payoutId: string) => ({
    PK: `${payoutId.startsWith(X402_REFUND_PREFIX) ? P.x402Refund : P.payout}${agentId}`,
    SK: payoutId,
  }),
  payoutPartition: (agentId: string) => `${P.payout}${agentId}`,
  /** The agent's single in-flight payout lock per currency (exists while one is PENDING/PROCESSING). */
  payoutLock: (agentId: string, currency: string) => ({ PK: `${P.payoutLock}${agentId}#${currency}`, SK: 'LOCK' }),
  /**
   * Beside the lock, in its partition: what the agent's counted payouts in this currency withdrew
   * and paid in fees (core/fees.ts `FeeBasis`), written only by whoever holds or takes the lock.
   */
  payoutFees: (agentId: string, currency: string) => ({ PK: `${P.payoutLock}${agentId}#${currency}`, SK: 'FEES' }),
  // Top-ups (docs/topups.md).
  /** All top-ups of one user, sorted by id (= creation order): another user's simply is not there. */
  topup: (userId: string, topupId: string) => ({ PK: `${P.topup}${userId}`, SK: topupId }),
  topupPartition: (userId: string) => `${P.topup}${userId}`,
  /** GSI1 entry that exists exactly while a top-up is PENDING: the watcher's work list, by expiry, in EXPIRY_SHARDS partitions. */
  pendingTopupIndex: (expiresAt: string, topupId: string) => ({
    GSI1PK: `${I.pendingTopups.key}${shardOf(topupId, EXPIRY_SHARDS)}`,
    GSI1SK: `${expiresAt}#${topupId}`,
  }),
  /** Every partition of the watcher's work list: the shards, then the legacy one. */
  pendingTopupPartitions: () => [...Array.from({ length: EXPIRY_SHARDS }, (_, s) => `${I.pendingTopups.key}${s}`), I.pendingTopups.legacy],
  /** A Solana Pay reference key → its top-up (also for references of expired/completed ones). */
  topupReference: (reference: string) => ({ PK: `${P.topupReference}${reference}`, SK: 'REF' }),
  /** A PayPal order id → its top-up (the webhook knows only the order). */
  topupOrder: (orderId: string) => ({ PK: `${P.topupOrder}${orderId}`, SK: 'ORDER' }),
  /** How many PENDING top-ups a payer has (at most MAX_OPEN_TOPUPS): raised by the create, lowered by whatever ends one. */
  openTopups: (userId: string) => ({ PK: `${P.openTopups}${userId}`, SK: 'COUNT' }),
  /** Credit-once guard: one item per credited Solana signature or PayPal capture id. */
  topupCredit: (rail: string, externalId: string) => ({ PK: `${P.topupCredit}${rail}#${externalId}`, SK: 'CREDIT' }),
  /** A PayPal webhook transmission already received (TTL'd): a replay is refused before PayPal is asked. */
  paypalTransmission: (transmissionId: string) => ({ PK: `${P.paypalTransmission}${transmissionId}`, SK: 'TX' }),
  /** Reverse-once guard: one item per PayPal refund / reversal taken back from a credited capture. */
  topupReversal: (rail: string, refundId: string) => ({ PK: `${P.topupReversal}${rail}#${refundId}`, SK: 'REVERSAL' }),
  /** Append-only record of each reversal of a credited top-up (the audit's money out: `debited` and `owed`). */
  reversal: (userId: string, refundId: string) => ({ PK: `${P.reversal}${userId}`, SK: refundId }),
  /** A payment to the deposit wallet that matched no top-up: kept for an operator, never dropped. */
  unmatchedPayment: (signature: string) => ({ PK: `${P.unmatchedPayment}${signature}`, SK: 'UNMATCHED' }),
  unmatchedIndex: (signature: string) => ({ GSI1PK: I.unmatched.key, GSI1SK: signature }),
  /** The watcher's cursor over the deposit token account's signatures. */
  depositCursor: (account: string) => ({ PK: `${P.depositCursor}${account}`, SK: 'CURSOR' }),
  /**
   * Credit-once guard across every rail: one item per on-chain transaction that credited money (a
   * USDC top-up or an x402 settlement), written in the crediting transaction (store/topups/chain-credit.ts).
   */
  chainCredit: (signature: string) => ({ PK: `${P.chainCredit}${signature}`, SK: 'CREDIT' }),
  idempotency: (scope: string, key: string) => ({ PK: `${P.idempotency}${scope}#${key}`, SK: 'IDEM' }),
  health: () => ({ PK: P.health, SK: 'HEALTH' }),
  // Webhooks (docs/webhooks.md): an owner is `agent#<id>` or `user#<id>` (core/events.ts ownerKey).
  /** An owner's webhook endpoints, one partition (at most 10 items), sorted by id. */
  webhook: (owner: string, webhookId: string) => ({ PK: `${P.webhook}${owner}`, SK: webhookId }),
  webhookPartition: (owner: string) => `${P.webhook}${owner}`,
  /** The owner's endpoint count, so the limit of 10 is a condition in the create transaction. */
  webhookCount: (owner: string) => ({ PK: `${P.webhookCount}${owner}`, SK: 'COUNT' }),
  /** One attempt at delivering one event to one endpoint (TTL'd), newest last by sort key. */
  webhookDelivery: (webhookId: string, attemptId: string) => ({ PK: `${P.webhookDelivery}${webhookId}`, SK: attemptId }),
  webhookDeliveryPartition: (webhookId: string) => `${P.webhookDelivery}${webhookId}`,
  /** How many attempts one event has had at one endpoint (the attempt number; SQS's receive count is approximate). */
  webhookAttempts: (webhookId: string, eventId: string) => ({ PK: `${P.webhookAttempts}${webhookId}`, SK: eventId }),
  /** The endpoint's current window of test pings (a counter, TTL'd): at most a few a minute. */
  webhookTestWindow: (webhookId: string) => ({ PK: `${P.webhookTestWindow}${webhookId}`, SK: 'WINDOW' }),
  /** An outbox item: the events one state change produced, written in that change's transaction. */
  outbox: (eventId: string) => ({ PK: `${P.outbox}${eventId}`, SK: 'OUTBOX' }),
  // Grants (docs/grants.md).
  /** A payer's grants, one partition sorted by id (= creation order): another payer's is simply not there. */
  grant: (userId: string, grantId: string) => ({ PK: `${P.grant}${userId}`, SK: grantId }),
  grantPartition: (userId: string) => `${P.grant}${userId}`,
  /** A grant key's hash → its grant (and the terms a charge is judged by, which never change). */
  grantKey: (keyHash: string) => ({ PK: `${P.grantKey}${keyHash}`, SK: 'GRANTKEY' }),
  /** How many active grants a payer has (at most MAX_ACTIVE_GRANTS): the limit is a condition on this item. */
  grantCount: (userId: string) => ({ PK: `${P.grantCount}${userId}`, SK: 'COUNT' }),
  /** An agent's grant requests, sorted by id: another agent's is simply not there. */
  grantRequest: (agentId: string, requestId: string) => ({ PK: `${P.grantRequest}${agentId}`, SK: requestId }),
  /** A consent link's token hash → its grant request (the token itself is never stored). */
  consent: (tokenHash: string) => ({ PK: `${P.consent}${tokenHash}`, SK: 'CONSENT' }),
  // x402 (docs/x402.md).
  /** Credit-once guard and state of one x402 settlement, keyed by its transaction's message hash (x402.repository.ts). */
  x402Settlement: (messageHash: string) => ({ PK: `${P.x402Settlement}${messageHash}`, SK: 'SETTLEMENT' }),
  /** GSI1 entry that exists exactly while a settlement is PENDING: the reconciler's work list, by age. */
  x402PendingIndex: (createdAt: string, signature: string) => ({ GSI1PK: I.x402Pending.key, GSI1SK: `${createdAt}#${signature}` }),
  /** GSI1 entry that exists exactly while a CREDITED settlement awaits its check at `finalized`. */
  x402UnfinalizedIndex: (creditedAt: string, signature: string) => ({
    GSI1PK: I.x402Unfinalized.key,
    GSI1SK: `${creditedAt}#${signature}`,
  }),
  /** An agent's credited x402 payments, one partition sorted by id (= creation order): the listing and the audit. */
  x402Payment: (agentId: string, paymentId: string) => ({ PK: `${P.x402Payment}${agentId}`, SK: paymentId }),
  x402PaymentPartition: (agentId: string) => `${P.x402Payment}${agentId}`,
  /** An agent's refunds of x402 payments, by id: payouts in all but their partition (`keys.payout` routes their ids here). */
  x402Refund: (agentId: string, refundId: string) => ({ PK: `${P.x402Refund}${agentId}`, SK: refundId }),
  /** A `payment-identifier` an agent's verify or settle saw, bound to its payment (x402-payment-identifier.repository.ts). */
  x402PaymentIdentifier: (agentId: string, id: string) => ({ PK: `${P.x402PaymentIdentifier}${agentId}#${id}`, SK: 'PID' }),
  // The console (docs/console.md): sessions, passkeys, WebAuthn challenges and rate windows, all TTL'd but passkeys.
  /** A console session by the hash of its cookie's value (the value itself is never stored). */
  consoleSession: (sessionHash: string) => ({ PK: `${P.consoleSession}${sessionHash}`, SK: 'SESSION' }),
  /** A payer's sessions, one partition: what `Sign out everywhere` ends. */
  userSession: (userId: string, sessionHash: string) => ({ PK: `${P.userSessions}${userId}`, SK: sessionHash }),
  userSessionPartition: (userId: string) => `${P.userSessions}${userId}`,
  /** A passkey by its credential id: how a discoverable sign-in finds its payer. */
  passkey: (credentialId: string) => ({ PK: `${P.passkey}${credentialId}`, SK: 'PASSKEY' }),
  /** A payer's passkeys, one partition sorted by credential id (and the `ACCOUNTKEY` marker of an account-key sign-in). */
  userPasskey: (userId: string, credentialId: string) => ({ PK: `${P.userPasskeys}${userId}`, SK: `PASSKEY#${credentialId}` }),
  userAccountKeyMarker: (userId: string) => ({ PK: `${P.userPasskeys}${userId}`, SK: 'ACCOUNTKEY' }),
  userPasskeyPartition: (userId: string) => `${P.userPasskeys}${userId}`,
  /** A WebAuthn challenge spent, by its digest (handed out, it is stored nowhere: the ceremony that answers it records it once). */
  webauthnChallenge: (digest: string) => ({ PK: `${P.webauthnChallenge}${digest}`, SK: 'CHALLENGE' }),
  /** One address's attempts at one console action in one window (sign-in failures, sign-ups). */
  consoleRate: (action: string, address: string, window: number) => ({ PK: `${P.consoleRate}${action}#${address}#${window}`, SK: 'RATE' }),
  // Tabs (DESIGN §29, store/tabs/): a partition per tab, so its uses share no item with any other tab's.
  /** The tab item: limit, used, status; what every use updates (no index entry: a use writes no index). */
  tab: (tabId: string) => ({ PK: `${P.tab}${tabId}`, SK: 'TAB' }),
  /** One use, keyed by its Idempotency-Key: the use's record and its replay. */
  tabUsage: (tabId: string, idempotencyKey: string) => ({ PK: `${P.tab}${tabId}`, SK: `U#${idempotencyKey}` }),
  tabPartition: (tabId: string) => `${P.tab}${tabId}`,
  /** A payer's tabs, one partition sorted by id (= creation order): the payer's list. */
  userTab: (userId: string, tabId: string) => ({ PK: `${P.userTabs}${userId}`, SK: tabId }),
  userTabPartition: (userId: string) => `${P.userTabs}${userId}`,
  /** An agent's tabs, one partition sorted by id: what the kill switch closes. */
  agentTab: (agentId: string, tabId: string) => ({ PK: `${P.agentTabs}${agentId}`, SK: tabId }),
  agentTabPartition: (agentId: string) => `${P.agentTabs}${agentId}`,
} as const;
