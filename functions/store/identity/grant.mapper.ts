/**
 * A grant's item as stored (grant.repository.ts writes it, grant-charge-items.ts and the audit read
 * its counters) and as read back into the domain's `Grant`: one place that knows its attributes, so
 * the repository's transactions only say what they condition and count. Pure.
 */
import type { GrantScope } from '../../core/grant-scope';
import { GRANT_LIMIT_NAMES, type Grant, type GrantLimits, type PeriodSpend } from '../../core/grants';
import { isCurrency } from '../../core/money';
import { readMinor } from '../numbers';

/** The grant's attributes as stored (without keys, key hash and counting flag). */
export function grantItem(grant: Grant): Record<string, unknown> {
  return {
    type: 'Grant',
    grantId: grant.id,
    userId: grant.userId,
    agentId: grant.agentId,
    agentName: grant.agentName,
    currency: grant.currency,
    limits: grant.limits,
    ...(grant.approvalAbove !== undefined ? { approvalAbove: grant.approvalAbove } : {}),
    ...(grant.scope !== undefined ? { scope: grant.scope } : {}),
    description: grant.description,
    ...(grant.expiresAt !== undefined ? { expiresAt: grant.expiresAt } : {}),
    createdAt: grant.createdAt,
    spent: grant.spent,
  };
}

export function toGrant(item: Record<string, unknown>): Grant {
  const currency = item.currency;
  if (!isCurrency(currency)) throw new Error(`grant ${String(item.grantId)}: unknown currency`);
  const rawLimits = (item.limits ?? {}) as Record<string, unknown>;
  const limits: GrantLimits = {};
  for (const name of GRANT_LIMIT_NAMES) {
    if (rawLimits[name] !== undefined) limits[name] = readMinor(rawLimits, name);
  }
  const period = (name: string): PeriodSpend | undefined => {
    const value = item[name] as Record<string, unknown> | undefined;
    return value && typeof value.p === 'string' ? { p: value.p, v: readMinor(value, 'v') } : undefined;
  };
  const spentHour = period('spentHour');
  const spentDay = period('spentDay');
  const spentMonth = period('spentMonth');
  return {
    id: String(item.grantId),
    userId: String(item.userId),
    agentId: String(item.agentId),
    agentName: String(item.agentName),
    currency,
    limits,
    ...(item.approvalAbove !== undefined ? { approvalAbove: readMinor(item, 'approvalAbove') } : {}),
    ...scopeOf(item),
    description: String(item.description ?? ''),
    ...(typeof item.expiresAt === 'string' ? { expiresAt: item.expiresAt } : {}),
    createdAt: String(item.createdAt),
    ...(typeof item.revokedAt === 'string' ? { revokedAt: item.revokedAt } : {}),
    spent: readMinor(item, 'spent'),
    ...(spentHour ? { spentHour } : {}),
    ...(spentDay ? { spentDay } : {}),
    ...(spentMonth ? { spentMonth } : {}),
  };
}

/** A stored scope (grant, grant key and grant request items alike), as `{scope}` to spread; `{}` for none. */
export function scopeOf(item: Record<string, unknown>): { scope?: GrantScope } {
  const raw = item.scope as Record<string, unknown> | undefined;
  if (!raw || typeof raw !== 'object') return {};
  const list = (name: string) => (Array.isArray(raw[name]) ? { [name]: (raw[name] as unknown[]).map(String) } : {});
  return { scope: { ...list('payees'), ...list('hosts') } };
}
