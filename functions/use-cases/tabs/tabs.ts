/**
 * Tabs (DESIGN §29, docs/tabs.md): hold once, meter many uses, capture what was used.
 *
 * - Opening is a hold made by `createCharge` itself (the same grant and policy checks, verdicts and
 *   order, the same transaction), keyed apart (`#tabs`), with the tab item and its entries in it.
 * - A use is ONE TransactWriteItems of the tab's own partition (store/tabs/tab-items.ts): the tab
 *   item, conditioned on being OPEN, this agent's, not past `expiresAt` and at exactly the `used`
 *   this container knows, and the use's item, new under its Idempotency-Key. So a warm use reads
 *   nothing and knows its answer's `used`. This container's copy of a tab is only ever behind
 *   (uses only add): a refused condition hands back the tab as it is (ALL_OLD), and the use is
 *   judged again from that, still without a read. Reads happen on a cold container, a replay and a
 *   refusal only.
 * - Closing is the hold's settlement (store/charges/charge-settlement.repository.ts `settlePending`):
 *   `used` captured (a charge of type `tab`), the rest released, the tab CLOSED, in one transaction
 *   conditioned on `used` being what was read, so no use slips between the read and the close
 *   (close.ts).
 */
import { config } from '../../config';
import type { StoredReply } from '../../contracts/api';
import { StoredReply as Replay } from '../../contracts/api';
import type { ChargeOutcome } from '../../contracts/charge-outcome';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../../contracts/cursor';
import { serialize } from '../../contracts/json';
import type { ListTabUsageQuery, ListUserTabsQuery, OpenTabRequest, TabUsageRequest } from '../../contracts/tab.schemas';
import { usageAnswerView } from '../../contracts/tab-views';
import type { AgentRef } from '../../core/agents';
import { isId, newTabUsageId } from '../../core/ids';
import { AmountError, type Minor, parseAmount, unitsToMinor } from '../../core/money';
import { DEFAULT_TAB_SECONDS, decideUsage, type Tab, type TabUsage } from '../../core/tabs';
import { refuse } from '../../messages/refusal';
import type { GrantKeyTerms } from '../../store/identity/credentials.repository';
import { commitUsage, getTab, getUsage, listUsage, listUserTabs, toTab, toUsage } from '../../store/tabs/tab.repository';
import { createCharge } from '../charges/charges';
import { fingerprint } from '../idempotency';
import { agentOfTab, known, remember } from './known';

export interface OpenTabInput extends OpenTabRequest {
  agent: AgentRef & { name?: string };
  userId: string;
  userKeyHash: string;
  grant?: GrantKeyTerms | undefined;
  idempotencyKey: string;
  baseUrl: string;
}

/**
 * POST /api/v1/agents/tabs: `limit` held exactly as a hold (`capture: false`, `holdSeconds` =
 * `ttlSeconds`) would be, with its refusals (403 blocked, 402 over a limit or short of funds, each
 * keeping a FAILED charge) and its approval (202, the tab PENDING_APPROVAL until the payer approves
 * its hold, then OPEN for `ttlSeconds` from the approval).
 */
export function openTab(input: OpenTabInput): Promise<ChargeOutcome | StoredReply> {
  const { agent, userId, userKeyHash, grant, idempotencyKey, baseUrl, currency, limit, description, ttlSeconds } = input;
  return createCharge({
    agent,
    userId,
    userKeyHash,
    grant,
    idempotencyKey,
    baseUrl,
    amount: limit,
    currency,
    description,
    capture: false,
    holdSeconds: ttlSeconds ?? DEFAULT_TAB_SECONDS,
    tab: true,
  });
}

/** The agent's own tab, read now (404 for none or another agent's). */
async function ownTab(agentId: string, tabId: string | undefined): Promise<Tab> {
  if (!isId('tab', tabId) || agentOfTab(tabId) !== agentId) throw refuse('tabNotFound');
  const tab = await getTab(tabId);
  if (!tab || tab.agentId !== agentId) throw refuse('tabNotFound');
  remember(tab);
  return tab;
}

export interface UseTabInput extends TabUsageRequest {
  agent: AgentRef;
  tabId: string | undefined;
  idempotencyKey: string;
}

/**
 * Rounds of a use: each refused round learnt the tab as it is from the refusal itself (no read, no
 * wait), and among uses racing one tab each round one of them commits.
 */
const USE_ROUNDS = 40;

/**
 * POST /api/v1/agents/tabs/{id}/usage: `amount` of the tab's currency added to `used`, never past
 * `limit`; 409 `tab limit exceeded` or `tab is not open` changes nothing; the same key again
 * answers the first use (a StoredReply), another body under it 422.
 */
export async function useTab(input: UseTabInput): Promise<TabUsage | StoredReply> {
  const { agent, tabId, idempotencyKey, description } = input;
  if (!isId('tab', tabId) || agentOfTab(tabId) !== agent.id) throw refuse('tabNotFound');
  let tab = known.get(tabId) ?? (await ownTab(agent.id, tabId));
  const amount = readAmount(input.amount, tab);
  const print = fingerprint({ amount, description });
  let fresh = false;
  for (let round = 0; round < USE_ROUNDS; round++) {
    const now = new Date();
    const decision = decideUsage(tab, amount, now);
    if (decision.kind === 'ask') {
      // Waiting for approval, or past its end, as known: the tab as it is decides.
      if (!fresh) {
        tab = await ownTab(agent.id, tabId);
        fresh = true;
        continue;
      }
      return refusedUse(tabId, idempotencyKey, print, 'tabNotOpen');
    }
    if (decision.kind === 'refused') {
      return refusedUse(tabId, idempotencyKey, print, decision.reason === 'not-open' ? 'tabNotOpen' : 'tabLimitExceeded');
    }
    const usage: TabUsage = {
      tabId,
      usageId: newTabUsageId(),
      amount,
      currency: tab.currency,
      description,
      usedAfter: decision.usedAfter,
      limit: tab.limit,
      createdAt: now.toISOString(),
      fingerprint: print,
    };
    const result = await commitUsage({ usage, idempotencyKey, agentId: agent.id, usedBefore: tab.used, now });
    if (result.committed) {
      remember({ ...tab, used: decision.usedAfter, usageCount: tab.usageCount + 1 });
      return usage;
    }
    const { refusal } = result;
    if ('usage' in refusal) return replayOf(toUsage(refusal.usage), print);
    if (!refusal.tab) throw refuse('tabNotFound');
    // A close has begun (store/tabs/tab.repository.ts `freezeTab`): no use lands any more.
    if (refusal.tab.closingAt !== undefined) return refusedUse(tabId, idempotencyKey, print, 'tabNotOpen');
    tab = toTab(refusal.tab);
    remember(tab);
    fresh = true;
  }
  throw refuse('idempotencyInProgress');
}

/** A refusal, unless this very key already made a use (its answer wins, as every replay does). */
async function refusedUse(tabId: string, key: string, print: string, code: 'tabNotOpen' | 'tabLimitExceeded'): Promise<StoredReply> {
  const prior = await getUsage(tabId, key);
  if (prior) return replayOf(prior, print);
  throw refuse(code);
}

/** The first use's answer under its key, byte for byte as it was sent; 422 for another request. */
function replayOf(prior: TabUsage, print: string): StoredReply {
  if (prior.fingerprint !== print) throw refuse('idempotencyMismatch');
  return new Replay(200, serialize(usageAnswerView(prior)));
}

/** An amount literal of the tab's currency, exactly, or 400 naming `amount` (never rounded). */
function readAmount(literal: string, tab: Tab): Minor {
  try {
    return parseAmount(literal, tab.currency, unitsToMinor(config().MAX_AMOUNT, tab.currency));
  } catch (error) {
    if (error instanceof AmountError) throw refuse('invalidAmount', error.reason);
    throw error;
  }
}

/** GET /api/v1/agents/tabs/{id}: the agent's own tab as it is now. */
export function readTab(agentId: string, tabId: string | undefined): Promise<Tab> {
  return ownTab(agentId, tabId);
}

/** A page of a tab's uses (in the order of their keys) and the cursor of the next. */
export interface UsagePage {
  usages: TabUsage[];
  nextCursor: string | null;
}

/** GET /api/v1/agents/tabs/{id}/usage?limit=&cursor=: the agent's own tab's uses. */
export async function listTabUsage(agentId: string, tabId: string | undefined, query: ListTabUsageQuery): Promise<UsagePage> {
  const tab = await ownTab(agentId, tabId);
  const cursor = query.cursor ? readCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listUsage(tab.id, { limit, ...(cursor ? { after: cursor.after } : {}) });
  return { usages: page.usages, nextCursor: page.lastKey !== undefined ? encodeCursor([page.lastKey, limit]) : null };
}

/** A page of a payer's tabs, newest first, and the cursor of the next. */
export interface UserTabPage {
  tabs: (Tab & { description: string; agentName?: string })[];
  nextCursor: string | null;
}

/** GET /api/v1/users/me/tabs?status=&limit=&cursor=: every tab of the payer's, of every agent. */
export async function listPayerTabs(userId: string, query: ListUserTabsQuery): Promise<UserTabPage> {
  const cursor = query.cursor ? readCursor(query.cursor) : undefined;
  if (cursor && !isId('tab', cursor.after)) throw refuse('cursorInvalid');
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listUserTabs(userId, {
    limit,
    ...(cursor ? { after: cursor.after } : {}),
    ...(query.status ? { status: query.status } : {}),
  });
  return { tabs: page.tabs, nextCursor: page.lastId !== undefined ? encodeCursor([page.lastId, limit]) : null };
}

function readCursor(text: string): { after: string; limit: number } {
  return decodeCursor(text, ([after, limit, ...rest]) =>
    rest.length === 0 && typeof after === 'string' && after.length > 0 && isCount(limit) ? { after, limit } : undefined,
  );
}
