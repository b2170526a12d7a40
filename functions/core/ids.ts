import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

/**
 * Cuid-style ids: a letter prefix then a lower-case ULID. Lexicographic order is creation
 * order (monotonic within a millisecond), so sort keys built from them list newest-first.
 */
export const newChargeId = (): string => `c${ulid().toLowerCase()}`;
export const newPayoutId = (): string => `p${ulid().toLowerCase()}`;
export const newAgentId = (): string => `a${ulid().toLowerCase()}`;
export const newUserId = (): string => `u${ulid().toLowerCase()}`;
export const newRecordId = (): string => ulid().toLowerCase();
