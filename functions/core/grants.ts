/**
 * Grants (DESIGN §16, docs/grants.md): a payer's delegated, scoped charge credential for one agent
 * and one currency. The grant item carries its limits, its counters (`spent`, and the UTC day's
 * and month's spend) and what ends it (`revokedAt`, `expiresAt`), so a charge made with its key can
 * be judged by conditions on that one item inside the charge's own transaction
 * (store/charges/charge-items.ts `grantSpend`; a settlement's give-back: store/charges/grant-charge.ts). Pure: no AWS here.
 */
import type { GrantScope } from './grant-scope';
import type { Currency, Minor } from './money';

/** A payer has at most this many active grants (a counter item makes it exact under concurrency). */
export const MAX_ACTIVE_GRANTS = 100;
/** `ttlSeconds` bounds: a minute to a year. */
export const MIN_GRANT_TTL_SECONDS = 60;
export const MAX_GRANT_TTL_SECONDS = 31_536_000;
/** A grant request waits this long for the payer's decision. */
export const GRANT_REQUEST_TTL_SECONDS = 15 * 60;

export interface GrantLimits {
  perCharge?: Minor;
  /** The most per UTC clock hour (DESIGN §27), like `daily`. */
  hourly?: Minor;
  daily?: Minor;
  monthly?: Minor;
  /** A lifetime budget. */
  total?: Minor;
}

export type GrantStatus = 'active' | 'revoked' | 'expired';

/** Every limit a grant may have, in the order a refusal names them (the amount alone, then the windows, then the lifetime). */
export const GRANT_LIMIT_NAMES = ['perCharge', 'hourly', 'daily', 'monthly', 'total'] as const;

/** The UTC clock hour of `at` (`2026-01-15T10`): the period of a grant's hourly counter. */
export const hourOf = (at: Date): string => at.toISOString().slice(0, 13);

/** A running counter of one UTC period: `p` the hour (`2026-01-15T10`), day (`2026-01-15`) or month (`2026-01`), `v` minor units. */
export interface PeriodSpend {
  p: string;
  v: Minor;
}

export interface Grant {
  id: string;
  userId: string;
  agentId: string;
  agentName: string;
  currency: Currency;
  limits: GrantLimits;
  approvalAbove?: Minor;
  /** Where the agent may pay (core/grant-scope.ts); absent: anywhere. */
  scope?: GrantScope;
  description: string;
  expiresAt?: string;
  createdAt: string;
  revokedAt?: string;
  /** SUCCESS charges and open holds made under the grant, minor units. */
  spent: Minor;
  /** Kept only by a grant with an hourly limit. */
  spentHour?: PeriodSpend;
  spentDay?: PeriodSpend;
  spentMonth?: PeriodSpend;
}

/** What a grant is now: revoked wins over expired (the payer acted). */
export function grantStatus(grant: Pick<Grant, 'revokedAt' | 'expiresAt'>, now: Date): GrantStatus {
  if (grant.revokedAt !== undefined) return 'revoked';
  if (grant.expiresAt !== undefined && grant.expiresAt <= now.toISOString()) return 'expired';
  return 'active';
}

/** What the payer asks for when creating a grant (amounts already in minor units). */
export interface GrantTerms {
  currency: Currency;
  limits?: GrantLimits;
  approvalAbove?: Minor;
  scope?: GrantScope;
  ttlSeconds?: number;
  description?: string;
}

/** The grant that `terms` make for this payer and agent at `now`. */
export function newGrant(ids: { id: string; userId: string; agentId: string; agentName: string }, terms: GrantTerms, now: Date): Grant {
  return {
    ...ids,
    currency: terms.currency,
    limits: { ...(terms.limits ?? {}) },
    ...(terms.approvalAbove !== undefined ? { approvalAbove: terms.approvalAbove } : {}),
    ...(terms.scope !== undefined ? { scope: terms.scope } : {}),
    description: terms.description ?? '',
    ...(terms.ttlSeconds !== undefined ? { expiresAt: new Date(now.getTime() + terms.ttlSeconds * 1000).toISOString() } : {}),
    createdAt: now.toISOString(),
    spent: 0,
  };
}

// --- Grant requests: the agent asks, the payer consents (DESIGN §16) ---

/**
 * pending → approved (the payer allowed; the key waits for the agent) → claimed (the agent's first
 * read took the key); pending → denied; pending past `expiresAt` → expired (computed, not stored).
 */
export type GrantRequestStatus = 'pending' | 'approved' | 'claimed' | 'denied' | 'expired';

export interface GrantRequest {
  id: string;
  agentId: string;
  terms: GrantTerms;
  createdAt: string;
  expiresAt: string;
  /** Stored status: `pending`, `approved`, `claimed` or `denied` (expiry is computed). */
  state: Exclude<GrantRequestStatus, 'expired'>;
  /** The grant the payer's Allow created. */
  grantId?: string;
  userId?: string;
  decidedAt?: string;
}

export function grantRequestStatus(request: Pick<GrantRequest, 'state' | 'expiresAt'>, now: Date): GrantRequestStatus {
  return request.state === 'pending' && request.expiresAt <= now.toISOString() ? 'expired' : request.state;
}
