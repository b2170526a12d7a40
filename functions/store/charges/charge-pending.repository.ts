/**
 * PENDING charges' markers (`PENDINGCHARGE#<chargeId>`): what approve, decline, capture, release
 * and the sweeper know of a PENDING charge without reading it. A marker is written with its charge
 * (store/charges/charge-items.ts), carries the whole charge, and sits in GSI1 by expiry: the sweeper's
 * queue. Settling the charge retires it as a tombstone (`settledAt`, out of the index, TTL'd a day
 * later: charge-settlement.repository.ts), which every reader here treats as absent.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../../config';
import type { Charge, PendingReason, SpendCounted } from '../../core/charges';
import type { Currency } from '../../core/money';
import { db } from '../client';
import { readMinor } from '../numbers';
import { readShardedQueue } from '../sharded-queue';
import { keys } from '../table';
import { getCharge, optionalCounted, optionalString } from './charge-read.repository';

/** What approve, decline and the sweeper know of a PENDING charge from its marker. */
export interface PendingCharge {
  chargeId: string;
  agentId: string;
  userId: string;
  amount: number;
  currency: Currency;
  createdAt: string;
  expiresAt: string;
  pendingReason: PendingReason;
  /** Holds (authorize-then-capture): the capture window once approved, in seconds. */
  holdSeconds?: number;
  /**
   * The rest of the charge, so a settlement can render its webhook events without reading the
   * charge (`chargeOfPending`). Absent on markers written before the events were wired.
   */
  idempotencyKey?: string;
  description?: string;
  agentName?: string;
  /** The spend counters that counted it; absent on markers written before they were recorded (`countedOf`). */
  counted?: SpendCounted;
  /** The grant it was made under: a settlement gives what goes back to the grant's counters too. */
  grantId?: string;
  /**
   * The charge item sits in its shard (`keys.charge`). Absent on markers written before charges
   * were sharded, whose charge is in the agent's legacy partition (`pendingChargeKey`).
   */
  chargeSharded?: true;
  /** The hold of an x402 purchase: its settlement reads the charge (its terms are not on the marker). */
  purchase?: true;
  /** The hold of a tab (DESIGN §29): every settlement of it also moves the tab item (store/tabs/tab-items.ts). */
  tabId?: string;
}

/** Where the charge item of a PENDING charge is: its shard, or (an older marker's) the legacy partition. */
export function pendingChargeKey(pending: PendingCharge): { PK: string; SK: string } {
  return pending.chargeSharded ? keys.charge(pending.agentId, pending.chargeId) : keys.legacyCharge(pending.agentId, pending.chargeId);
}

/** The pending view of a PENDING charge read from its own item (capture and release start there). */
export function pendingOf(charge: Charge): PendingCharge {
  if (charge.status !== 'PENDING' || !charge.expiresAt || !charge.pendingReason) throw new Error(`charge ${charge.id} is not PENDING`);
  return {
    chargeId: charge.id,
    agentId: charge.agentId,
    userId: charge.userId,
    amount: charge.amount,
    currency: charge.currency,
    createdAt: charge.createdAt,
    expiresAt: charge.expiresAt,
    pendingReason: charge.pendingReason,
    ...(charge.holdSeconds !== undefined ? { holdSeconds: charge.holdSeconds } : {}),
    idempotencyKey: charge.idempotencyKey,
    description: charge.description,
    ...(charge.agentName !== undefined ? { agentName: charge.agentName } : {}),
    ...(charge.counted !== undefined ? { counted: charge.counted } : {}),
    ...(charge.grantId !== undefined ? { grantId: charge.grantId } : {}),
    ...(charge.legacyPartition ? {} : { chargeSharded: true as const }),
    ...(charge.purchase ? { purchase: true as const } : {}),
    ...(charge.tabId !== undefined ? { tabId: charge.tabId } : {}),
  };
}

/**
 * The PENDING charge a marker stands for, as the charge item holds it (refunds are impossible
 * while PENDING); undefined for a marker written before it carried the whole charge.
 */
export function chargeOfPending(pending: PendingCharge): Charge | undefined {
  if (pending.idempotencyKey === undefined || pending.description === undefined || pending.purchase) return undefined;
  return {
    id: pending.chargeId,
    agentId: pending.agentId,
    userId: pending.userId,
    idempotencyKey: pending.idempotencyKey,
    amount: pending.amount,
    currency: pending.currency,
    description: pending.description,
    status: 'PENDING',
    createdAt: pending.createdAt,
    ...(pending.agentName !== undefined ? { agentName: pending.agentName } : {}),
    pendingReason: pending.pendingReason,
    expiresAt: pending.expiresAt,
    ...(pending.holdSeconds !== undefined ? { holdSeconds: pending.holdSeconds, authorizedAmount: pending.amount } : {}),
    ...(pending.counted !== undefined ? { counted: pending.counted } : {}),
    ...(pending.grantId !== undefined ? { grantId: pending.grantId } : {}),
    ...(pending.chargeSharded ? {} : { legacyPartition: true as const }),
    ...(pending.tabId !== undefined ? { tabId: pending.tabId } : {}),
  };
}

/** The PENDING charge behind a marker: from the marker itself, or (an older marker) read. */
export async function chargeBeforeSettling(pending: PendingCharge): Promise<Charge | undefined> {
  return chargeOfPending(pending) ?? (await getCharge(pending.agentId, pending.chargeId));
}

/** A PENDING charge's marker (strongly consistent); undefined once it is no longer PENDING. */
export async function getPendingCharge(chargeId: string): Promise<PendingCharge | undefined> {
  const out = await db().send(new GetCommand({ TableName: config().TABLE_NAME, Key: keys.pendingCharge(chargeId), ConsistentRead: true }));
  // A settled marker (a tombstone) stands for no PENDING charge.
  return out.Item && out.Item.settledAt === undefined ? toPendingCharge(out.Item) : undefined;
}

function toPendingCharge(item: Record<string, unknown>): PendingCharge {
  return {
    chargeId: String(item.chargeId),
    agentId: String(item.agentId),
    userId: String(item.userId),
    amount: readMinor(item, 'amount'),
    currency: item.currency as Currency,
    createdAt: String(item.createdAt),
    expiresAt: String(item.expiresAt),
    pendingReason: item.pendingReason as PendingReason,
    ...(typeof item.holdSeconds === 'number' ? { holdSeconds: item.holdSeconds } : {}),
    ...optionalString(item, 'idempotencyKey'),
    ...optionalString(item, 'description'),
    ...optionalString(item, 'agentName'),
    ...optionalCounted(item),
    ...optionalString(item, 'grantId'),
    ...(item.chargeSharded === true ? { chargeSharded: true as const } : {}),
    ...(item.purchase === true ? { purchase: true as const } : {}),
    ...optionalString(item, 'tabId'),
  };
}

/**
 * PENDING charges whose `expiresAt` is before `before`, oldest first, at most `limit`, as the index
 * shows their markers (whole items: no read per charge): one Query per partition of the queue
 * (`keys.pendingExpiryPartitions`: the shards and the legacy one), merged (store/sharded-queue.ts).
 * The index is eventually consistent: one already settled may still be listed, and its
 * settlement's condition refuses it.
 */
export async function listDuePending(before: Date, limit: number): Promise<PendingCharge[]> {
  const items = await readShardedQueue(keys.pendingExpiryPartitions(), { limit, before: before.toISOString() });
  return items.map(toPendingCharge);
}
