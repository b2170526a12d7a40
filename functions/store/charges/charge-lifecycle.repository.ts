/**
 * The agent's side of the charge lifecycle (docs/design.md §12, docs/lifecycle.md): capture and
 * release of a hold, refunds. Each is ONE TransactWriteItems, each item named with what its
 * failed condition means (store/transact.ts), a replay first, then the kill switch:
 *
 *   capture / release:  the idempotency record; the kill switch (capture: the credited shard's copy
 *                         on for this key; release, which credits no shard: the agent item enabled);
 *                       the charge (PENDING as it was read: that pendingReason and expiresAt, not past it);
 *                       the user's item (held → balance for what goes back; counters lowered by it);
 *                       the pending marker deleted; (capture) one shard of the agent credited
 *   refund:             the idempotency record; the kill switch;
 *                       the charge: refundedAmount raised, conditioned on SUCCESS and on the
 *                         refunded total it was read with (so the answer states it exactly);
 *                       the user's balance credited; the agent's shards debited, each
 *                         conditioned on holding its part (a withdrawal racing for the same money
 *                         fails its own condition or this one: the balance never goes below zero)
 *   each:               the outbox item with its webhook events (store/events/outbox.ts)
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactGetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { Charge } from '../../core/charges';
import { BalanceLimitError, RefundExceedsChargeError, StaleReadError } from '../../core/errors';
import type { OutboxEvent } from '../../core/events';
import type { IdempotencyWrite } from '../../core/idempotency';
import type { AgentLedger, ShardDebit, ShardState } from '../../core/ledger';
import { CURRENCIES, type Minor } from '../../core/money';
import { zeroBalances } from '../../core/users';
import { batchGetConsistent } from '../batch-get';
import { db } from '../client';
import { withOutbox } from '../events/outbox';
import { idempotencyPut } from '../idempotency.repository';
import { agentEnabledCheck } from '../identity/agent.repository';
import { headroom, readMinor } from '../numbers';
import { refundEntry, statementPut } from '../statement/statement-items';
import { keys, PARTITIONS } from '../table';
import { named, transactWrite } from '../transact';
import { shardDebits } from './balance.repository';
import { pendingOf } from './charge-pending.repository';
import { chargeKeyOf, toCharge } from './charge-read.repository';
import { type Settlement, settlePending } from './charge-settlement.repository';

/**
 * Captures (`{kind: 'capture'}`) or releases (`{kind: 'return'}`) the PENDING hold `charge` as it
 * was read, with its idempotency record and the agent's kill switch in the same transaction; it
 * commits only from that state, so the charge it leaves is `charge` settled. Throws
 * IdempotencyRecordExistsError, AgentDisabledError, or what `settlePending` throws
 * (ChargeNotPendingError, ChargeAwaitsApprovalError, StaleReadError: read again;
 * BalanceLimitError when the agent's shard is at its cap).
 */
export async function commitSettlement(
  charge: Charge,
  settlement: Settlement,
  agentKeyHash: string,
  idem: IdempotencyWrite,
  now: Date,
  events: readonly OutboxEvent[] = [],
): Promise<void> {
  // A capture's credited shard carries the key's kill switch; a release credits none: the agent item's (store/charges/settlement-items.ts).
  await settlePending(pendingOf(charge), settlement, now, { agent: { keyHash: agentKeyHash, idem }, events });
}

/** A charge and its agent's balance shards, as read together. */
export interface ChargeAndLedger {
  charge?: Charge;
  ledger: AgentLedger;
}

/** The charge's keys (its shard, and the legacy partition a charge from before the sharding is in) and the agent's shards. */
const chargeAndShardKeys = (agentId: string, chargeId: string) => ({
  chargeKeys: [keys.charge(agentId, chargeId), keys.legacyCharge(agentId, chargeId)],
  shardKeys: Array.from({ length: config().BALANCE_SHARDS }, (_, i) => keys.agentBalanceShard(agentId, i)),
});

/**
 * One charge of an agent and that agent's balance shards, in one strongly consistent
 * BatchGetItem: the refund's one read. Each item is read on its own, so the whole is no snapshot:
 * a refund, withdrawal or charge that commits meanwhile may show in some items and not in others
 * (`readChargeAndLedgerSnapshot` when that matters).
 */
export async function readChargeAndLedger(agentId: string, chargeId: string): Promise<ChargeAndLedger> {
  const { chargeKeys, shardKeys } = chargeAndShardKeys(agentId, chargeId);
  return chargeAndLedgerOf(await batchGetConsistent([...chargeKeys, ...shardKeys]));
}

/**
 * The same as one serializable snapshot (TransactGetItems: every item as of one moment, no
 * transaction half seen). Dearer (two read units per item), so only to confirm a refusal the
 * plain read suggested. Throws StaleReadError when a transaction on these items was in flight
 * past the SDK's retries (TransactionCanceledException): read again.
 */
export async function readChargeAndLedgerSnapshot(agentId: string, chargeId: string): Promise<ChargeAndLedger> {
  const { chargeKeys, shardKeys } = chargeAndShardKeys(agentId, chargeId);
  const table = config().TABLE_NAME;
  try {
    const out = await db().send(
      new TransactGetCommand({ TransactItems: [...chargeKeys, ...shardKeys].map((Key) => ({ Get: { TableName: table, Key } })) }),
    );
    const items = (out.Responses ?? []).flatMap((r) => (r.Item ? [r.Item] : []));
    return chargeAndLedgerOf(items);
  } catch (error) {
    if (error instanceof TransactionCanceledException) throw new StaleReadError('charge and agent balance');
    throw error;
  }
}

function chargeAndLedgerOf(items: Record<string, unknown>[]): ChargeAndLedger {
  const chargeItem = items.find((item) => String(item.PK).startsWith(PARTITIONS.charge));
  const shards: ShardState[] = items
    .filter((item) => String(item.PK).startsWith(PARTITIONS.agentBalanceShard))
    .map((item) => {
      const balances = zeroBalances();
      for (const c of CURRENCIES) balances[c] = readMinor(item, c);
      return { shard: Number(String(item.PK).split('#').pop()), balances, charges: readMinor(item, 'charges') };
    })
    .sort((a, b) => a.shard - b.shard);
  const balances = zeroBalances();
  let count = 0;
  for (const s of shards) {
    for (const c of CURRENCIES) balances[c] += s.balances[c];
    count += s.charges;
  }
  return { ...(chargeItem ? { charge: toCharge(chargeItem) } : {}), ledger: { balances, charges: count, shards } };
}

/**
 * Refunds `amount` of the SUCCESS `charge` (as read: its refunded total is the basis), taking it
 * from the agent's shards as `plan` says and giving it to the user. `agentKeyHash`: the agent's
 * own refund, under its kill switch; undefined: the operator's (docs/lifecycle.md, "The operator
 * returns a disabled agent's earnings"), which a disabled agent's money needs. Throws
 * IdempotencyRecordExistsError, AgentDisabledError, RefundExceedsChargeError (the refunds together
 * would pass the charge), StaleReadError (another refund or a withdrawal moved first: read again),
 * BalanceLimitError (the user's balance is at its cap).
 */
export async function commitRefund(
  charge: Charge,
  amount: Minor,
  plan: readonly ShardDebit[],
  agentKeyHash: string | undefined,
  idem: IdempotencyWrite,
  now: Date,
  events: readonly OutboxEvent[] = [],
): Promise<void> {
  const table = config().TABLE_NAME;
  const refunded = charge.refundedAmount ?? 0;
  await transactWrite(
    withOutbox(
      [
        idempotencyPut(idem, now),
        ...(agentKeyHash === undefined ? [] : [agentEnabledCheck(agentKeyHash)]),
        named(
          {
            Update: {
              TableName: table,
              Key: chargeKeyOf(charge),
              // The operator's share is kept apart too: who gave back what stays on the charge.
              UpdateExpression: `SET refundedAmount = :after, refundedAt = :now${
                agentKeyHash === undefined ? ', operatorRefundedAmount = if_not_exists(operatorRefundedAmount, :zero) + :given' : ''
              }`,
              ConditionExpression: `#status = :success AND amount = :amount AND ${
                refunded === 0 ? '(attribute_not_exists(refundedAmount) OR refundedAmount = :before)' : 'refundedAmount = :before'
              }`,
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: {
                ':success': 'SUCCESS',
                ':amount': charge.amount,
                ':before': refunded,
                ':after': refunded + amount,
                ':now': now.toISOString(),
                ...(agentKeyHash === undefined ? { ':zero': 0, ':given': amount } : {}),
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          {
            onConditionFailed: (old) => {
              const oldRefunded = typeof old?.refundedAmount === 'number' ? old.refundedAmount : 0;
              // The refunds that committed meanwhile leave too little: a refusal, not a race to retry.
              if (old && old.status === 'SUCCESS' && oldRefunded + amount > charge.amount) return new RefundExceedsChargeError();
              return new StaleReadError('charge refunds');
            },
            precedence: 2,
          },
        ),
        named(
          {
            Update: {
              TableName: table,
              Key: keys.user(charge.userId),
              UpdateExpression: 'ADD #cur :amount',
              ConditionExpression: 'attribute_exists(PK) AND (attribute_not_exists(#cur) OR #cur <= :headroom)',
              ExpressionAttributeNames: { '#cur': charge.currency },
              ExpressionAttributeValues: { ':amount': amount, ':headroom': headroom(amount) },
            },
          },
          { onConditionFailed: () => new BalanceLimitError(), precedence: 1 },
        ),
        // Each debit's failure: a withdrawal or another refund moved the balance (StaleReadError).
        ...shardDebits(charge.agentId, charge.currency, plan),
        // The payer's statement entry of the credit (docs/statement.md).
        statementPut(refundEntry(charge, amount, now)),
      ],
      events,
      now,
    ),
  );
}
