/**
 * The single table's shape and every key builder. Shared by the repositories, the local runner
 * (which creates the table) and the CDK stack (which declares it), so the three cannot drift.
 * Item layout and why: docs/data-model.md.
 */
export const TABLE_KEYS = { partitionKey: 'PK', sortKey: 'SK' } as const;
export const GSI1 = { indexName: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' } as const;
/** A user's charges across agents, newest first (the user's history and authorization log). */
export const GSI2 = { indexName: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' } as const;
/** Every global secondary index, for the local runner and the CDK stack to declare alike. */
export const INDEXES = [GSI1, GSI2] as const;
/** TTL attribute (epoch seconds) on idempotency records. */
export const TTL_ATTRIBUTE = 'ttl';

export const keys = {
  /** The agent item: operators flip `enabled` here. Keyed by the hash of the agent's key. */
  agent: (keyHash: string) => ({ PK: `AGENTKEY#${keyHash}`, SK: 'AGENT' }),
  /** GSI1 entry that finds an agent item by agentId. */
  agentIndex: (agentId: string) => ({ GSI1PK: `AGENT#${agentId}`, GSI1SK: 'AGENT' }),
  /** One reservation per look-alike skeleton (core/text.ts `nameSkeleton`), so no two agents' names can be confused. */
  agentName: (skeleton: string) => ({ PK: `AGENTNAME#${skeleton}`, SK: 'AGENTNAME' }),
  /** One write shard of an agent's earned balance and charge count. */
  agentBalanceShard: (agentId: string, shard: number) => ({ PK: `AGENTBAL#${agentId}#${shard}`, SK: 'BAL' }),
  user: (userId: string) => ({ PK: `USER#${userId}`, SK: 'USER' }),
  userKey: (keyHash: string) => ({ PK: `USERKEY#${keyHash}`, SK: 'USERKEY' }),
  /** Append-only record of each admin credit (the audit's source of money in). */
  credit: (userId: string, recordId: string) => ({ PK: `CREDITS#${userId}`, SK: recordId }),
  /** All charges of one agent live in one partition, sorted by id (= creation order). */
  charge: (agentId: string, chargeId: string) => ({ PK: `CHARGES#${agentId}`, SK: chargeId }),
  chargePartition: (agentId: string) => `CHARGES#${agentId}`,
  /** GSI1 entry that finds a charge by id alone (admin reads). */
  chargeIndex: (chargeId: string) => ({ GSI1PK: `CHARGE#${chargeId}`, GSI1SK: 'CHARGE' }),
  /** GSI2 entry that lists a user's charges across agents, sorted by id (= creation order). */
  userChargeIndex: (userId: string, chargeId: string) => ({ GSI2PK: `USERCHARGES#${userId}`, GSI2SK: chargeId }),
  userChargePartition: (userId: string) => `USERCHARGES#${userId}`,
  /**
   * Exists exactly while a charge is PENDING: where approve/decline/capture find it by id alone
   * (strongly consistent), and, through its GSI1 entry, where the sweeper finds it when due.
   */
  pendingCharge: (chargeId: string) => ({ PK: `PENDINGCHARGE#${chargeId}`, SK: 'PENDING' }),
  /** All payouts of one agent, sorted by id (= creation order). */
  payout: (agentId: string, payoutId: string) => ({ PK: `PAYOUTS#${agentId}`, SK: payoutId }),
  payoutPartition: (agentId: string) => `PAYOUTS#${agentId}`,
  /** The agent's single in-flight payout lock per currency (exists while one is PENDING/PROCESSING). */
  payoutLock: (agentId: string, currency: string) => ({ PK: `PAYOUTLOCK#${agentId}#${currency}`, SK: 'LOCK' }),
  // Top-ups (docs/topups.md).
  /** All top-ups of one user, sorted by id (= creation order): another user's simply is not there. */
  topup: (userId: string, topupId: string) => ({ PK: `TOPUPS#${userId}`, SK: topupId }),
  topupPartition: (userId: string) => `TOPUPS#${userId}`,
  /** GSI1 entry that exists exactly while a top-up is PENDING: the watcher's work list, by expiry. */
  pendingTopupIndex: (expiresAt: string, topupId: string) => ({ GSI1PK: 'PENDINGTOPUPS', GSI1SK: `${expiresAt}#${topupId}` }),
  pendingTopupPartition: () => 'PENDINGTOPUPS',
  /** A Solana Pay reference key → its top-up (also for references of expired/completed ones). */
  topupReference: (reference: string) => ({ PK: `TOPUPREF#${reference}`, SK: 'REF' }),
  /** A PayPal order id → its top-up (the webhook knows only the order). */
  topupOrder: (orderId: string) => ({ PK: `TOPUPORDER#${orderId}`, SK: 'ORDER' }),
  /** How many PENDING top-ups a payer has (at most MAX_OPEN_TOPUPS): raised by the create, lowered by whatever ends one. */
  openTopups: (userId: string) => ({ PK: `OPENTOPUPS#${userId}`, SK: 'COUNT' }),
  /** Credit-once guard: one item per credited Solana signature or PayPal capture id. */
  topupCredit: (rail: string, externalId: string) => ({ PK: `TOPUPCREDIT#${rail}#${externalId}`, SK: 'CREDIT' }),
  /** Reverse-once guard: one item per PayPal refund / reversal taken back from a credited capture. */
  topupReversal: (rail: string, refundId: string) => ({ PK: `TOPUPREVERSAL#${rail}#${refundId}`, SK: 'REVERSAL' }),
  /** Append-only record of each reversal of a credited top-up (the audit's money out: `debited` and `owed`). */
  reversal: (userId: string, refundId: string) => ({ PK: `REVERSALS#${userId}`, SK: refundId }),
  /** A payment to the deposit wallet that matched no top-up: kept for an operator, never dropped. */
  unmatchedPayment: (signature: string) => ({ PK: `UNMATCHED#${signature}`, SK: 'UNMATCHED' }),
  unmatchedIndex: (signature: string) => ({ GSI1PK: 'UNMATCHED', GSI1SK: signature }),
  /** The watcher's cursor over the deposit token account's signatures. */
  depositCursor: (account: string) => ({ PK: `DEPOSITCURSOR#${account}`, SK: 'CURSOR' }),
  idempotency: (scope: string, key: string) => ({ PK: `IDEM#${scope}#${key}`, SK: 'IDEM' }),
  health: () => ({ PK: 'HEALTH', SK: 'HEALTH' }),
  // Webhooks (docs/webhooks.md): an owner is `agent#<id>` or `user#<id>` (core/events.ts ownerKey).
  /** An owner's webhook endpoints, one partition (at most 10 items), sorted by id. */
  webhook: (owner: string, webhookId: string) => ({ PK: `WEBHOOKS#${owner}`, SK: webhookId }),
  webhookPartition: (owner: string) => `WEBHOOKS#${owner}`,
  /** The owner's endpoint count, so the limit of 10 is a condition in the create transaction. */
  webhookCount: (owner: string) => ({ PK: `WEBHOOKCOUNT#${owner}`, SK: 'COUNT' }),
  /** One attempt at delivering one event to one endpoint (TTL'd), newest last by sort key. */
  webhookDelivery: (webhookId: string, attemptId: string) => ({ PK: `WHDELIVERY#${webhookId}`, SK: attemptId }),
  webhookDeliveryPartition: (webhookId: string) => `WHDELIVERY#${webhookId}`,
  /** How many attempts one event has had at one endpoint (the attempt number; SQS's receive count is approximate). */
  webhookAttempts: (webhookId: string, eventId: string) => ({ PK: `WHATTEMPTS#${webhookId}`, SK: eventId }),
  /** An outbox item: the events one state change produced, written in that change's transaction. */
  outbox: (eventId: string) => ({ PK: `OUTBOX#${eventId}`, SK: 'OUTBOX' }),
} as const;
