import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * The ULIDs' random source: bytes from the CSPRNG drawn 4 KB at a time. ulid's default asks
 * `crypto.randomBytes(1)` for each of an id's 16 random characters (about 3% of a charge's CPU,
 * measured in docs/service-overhead.md). A byte / 256 is uniform, so each character (× 32) is too.
 */
const pool = Buffer.alloc(4096);
let drawn = pool.length;
function randomUnit(): number {
  if (drawn >= pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  return (pool[drawn++] as number) / 256;
}

const ulid = monotonicFactory(randomUnit);

/**
 * Cuid-style ids: a letter prefix then a lower-case ULID. Lexicographic order is creation
 * order (monotonic within a millisecond), so sort keys built from them list newest-first.
 */
/**
 * A charge id: `c`, a lower-case ULID, then the id of the agent it was made for (54 characters,
 * DESIGN §18). Whoever holds the id finds the charge's item (agent, shard) with one GetItem and no
 * index: the charge item needs no by-id index entry. Ids made before carry no agent (27 characters)
 * and are still found through that index (store/charges/charge-read.repository.ts). The ULID comes first,
 * so ids of both forms still sort by creation.
 */
export const newChargeId = (agentId: string): string => `c${ulid().toLowerCase()}${agentId}`;
/** The agent a charge id names; undefined for an id of the earlier form, which names none. */
export const agentOfChargeId = (chargeId: string): string | undefined => (chargeId.length > 27 ? chargeId.slice(27) : undefined);
export const newPayoutId = (): string => `p${ulid().toLowerCase()}`;
export const newAgentId = (): string => `a${ulid().toLowerCase()}`;
export const newUserId = (): string => `u${ulid().toLowerCase()}`;
export const newTopupId = (): string => `t${ulid().toLowerCase()}`;
export const newGrantId = (): string => `g${ulid().toLowerCase()}`;
export const newGrantRequestId = (): string => `gr${ulid().toLowerCase()}`;
export const newRecordId = (): string => ulid().toLowerCase();
/** A refund of an x402 payment (DESIGN §28): paid as a payout, told apart from withdrawals by its prefix (store/table.ts `keys.payout`). */
export const newX402RefundId = (): string => `xr${ulid().toLowerCase()}`;
/**
 * A tab id (DESIGN §29): `t`, a lower-case ULID, then its agent's id (54 characters, apart from a
 * top-up's 27), so a tab names its agent as a charge id does.
 */
export const newTabId = (agentId: string): string => `t${ulid().toLowerCase()}${agentId}`;
/** One use of a tab: `tu` and a lower-case ULID (time-ordered). */
export const newTabUsageId = (): string => `tu${ulid().toLowerCase()}`;

/** The one pattern of each kind of id: a path or query value that does not match names nothing. */
export const ID_PATTERNS = {
  /** Either form (`newChargeId`): with its agent's id, or the earlier one without. */
  charge: /^c[0-9a-z]{26}(?:a[0-9a-z]{26})?$/,
  payout: /^p[0-9a-z]{26}$/,
  agent: /^a[0-9a-z]{26}$/,
  user: /^u[0-9a-z]{26}$/,
  topup: /^t[0-9a-z]{26}$/,
  grant: /^g[0-9a-z]{26}$/,
  grantRequest: /^gr[0-9a-z]{26}$/,
  x402Refund: /^xr[0-9a-z]{26}$/,
  tab: /^t[0-9a-z]{26}a[0-9a-z]{26}$/,
} as const;

export type IdKind = keyof typeof ID_PATTERNS;

/** Whether `value` is an id of this kind (undefined is not). */
export const isId = (kind: IdKind, value: string | undefined): value is string => value !== undefined && ID_PATTERNS[kind].test(value);
