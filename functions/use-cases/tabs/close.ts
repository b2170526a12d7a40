/**
 * Closing a tab (DESIGN §29): by its agent, its payer, or the service (the sweeper at `expiresAt`,
 * the agent's kill switch, the payer's block). The hold's one settlement
 * (store/charges/charge-settlement.repository.ts `settlePending`): `used` captured as a charge of
 * type `tab`, the rest released, the tab CLOSED and its entries with it, conditioned on `used`
 * being what was read, so no use slips between the read and the close; and once uses have sent
 * it round twice the tab is frozen (`closingAt`: no use commits after it), so a stream of uses
 * cannot keep a close from ever landing.
 */
import { tabView } from '../../contracts/tab-views';
import { backoffMs, sleep } from '../../core/backoff';
import { ChargeNotPendingError, ServiceBusyError, StaleReadError } from '../../core/errors';
import { isId } from '../../core/ids';
import type { Settlement } from '../../core/settlement-decision';
import { TAB_CLOSED_UNUSED, type Tab, type TabCloser } from '../../core/tabs';
import { refuse } from '../../messages/refusal';
import { logger } from '../../observability/logger';
import { serializeError } from '../../observability/serialize-error';
import { chargeBeforeSettling, getPendingCharge } from '../../store/charges/charge-pending.repository';
import { settlePending } from '../../store/charges/charge-settlement.repository';
import { freezeTab, getTab, listAgentOpenTabIds, listUserOpenTabIds } from '../../store/tabs/tab.repository';
import { settlementEvents, tabClosedEvents } from '../events/events';
import { agentOfTab, known } from './known';

/** Who asks for a close: the tab's agent, its payer, or the service itself (the sweeper, a kill switch, a block). */
export type CloseBy = { agentId: string } | { userId: string } | { service: Exclude<TabCloser, 'agent' | 'payer'> };

/** Rounds of a close: a use that commits between the read and the close sends it round again. */
const CLOSE_ROUNDS = 10;
/**
 * Rounds lost to uses before the close freezes the tab (`closingAt`: uses refused 409 `tab is not
 * open` from then on, even if this close then dies). Until then a use racing the close may land,
 * and a close that dies leaves the tab taking uses as before.
 */
const FREEZE_AFTER = 2;

/**
 * POST /api/v1/agents/tabs/{id}/close, POST /api/v1/users/me/tabs/{id}/close, and the service's own
 * closes: the tab CLOSED at what it used, captured as one charge of type `tab` (nothing used: all of
 * the hold released, the charge FAILED `tab closed unused`), `tab.closed` to the agent and the payer.
 * A closed tab answers as it is (closing is its own record: a second close changes nothing).
 */
export async function closeTab(tabId: string | undefined, by: CloseBy): Promise<Tab> {
  if (!isId('tab', tabId)) throw refuse('tabNotFound');
  if ('agentId' in by && agentOfTab(tabId) !== by.agentId) throw refuse('tabNotFound');
  const closedBy: TabCloser = 'agentId' in by ? 'agent' : 'userId' in by ? 'payer' : by.service;
  for (let round = 0; round < CLOSE_ROUNDS; round++) {
    const read = await getTab(tabId);
    if (!read || ('agentId' in by && read.agentId !== by.agentId) || ('userId' in by && read.userId !== by.userId)) {
      throw refuse('tabNotFound');
    }
    if (read.status === 'CLOSED') return read;
    const now = new Date();
    // Lost to uses FREEZE_AFTER times: from here no use commits (`freezeTab`), and the close
    // captures what the freeze answers. Without it a stream of uses (a thief metering the leaked
    // key's tab) sent every round back, kept the tab open and failed the rotation, the revocation
    // or the block (503) however often the payer asked.
    const tab = round < FREEZE_AFTER ? read : await freezeTab(tabId, now);
    if (!tab) continue;
    const closed: Tab = { ...tab, status: 'CLOSED', closedAt: now.toISOString(), closedBy };
    try {
      await settleTab(tab, closed, now);
      known.delete(tab.id);
      return closed;
    } catch (error) {
      // A use committed since the read, or another close (or the payer's decision) came first: read again.
      if (!(error instanceof StaleReadError || error instanceof ChargeNotPendingError)) throw error;
      await sleep(backoffMs(round + 1));
    }
  }
  throw refuse('idempotencyInProgress');
}

/** The hold's one settlement that closes the tab: `used` captured, the rest back to the payer. */
async function settleTab(tab: Tab, closed: Tab, now: Date): Promise<void> {
  const pending = await getPendingCharge(tab.chargeId);
  // The hold ended and the tab with it (one transaction): the next read shows it CLOSED.
  if (!pending) throw new StaleReadError('tab hold');
  const settlement: Settlement =
    tab.used > 0
      ? { kind: 'capture', amount: tab.used, tab: true }
      : closed.closedBy === 'expiry'
        ? { kind: 'return', status: 'EXPIRED', failureReason: null, tab: true }
        : { kind: 'return', status: 'FAILED', failureReason: TAB_CLOSED_UNUSED, tab: true };
  const before = await chargeBeforeSettling(pending);
  const events = [...(before ? settlementEvents(before, settlement, now) : []), ...tabClosedEvents(tab, tabView(closed), now)];
  await settlePending(pending, settlement, now, { events, tab: { closedBy: closed.closedBy ?? 'payer' } });
}

/**
 * The kill switch's and the block's close (docs/tabs.md "Kill switch and block"): each open tab of
 * the agent (or of the agent with this payer) closed at what it used before the switch, by the
 * service. One tab's trouble never stops the others; the caller hears how many failed.
 */
export async function closeTabsOf(
  who: { agentId: string; userId?: string },
  closedBy: 'agent disabled' | 'agent blocked',
): Promise<{ closed: number; failed: number }> {
  const ids =
    who.userId === undefined ? await listAgentOpenTabIds(who.agentId) : await listUserOpenTabIds(who.userId, { agentId: who.agentId });
  const report = { closed: 0, failed: 0 };
  for (const tabId of ids) {
    try {
      await closeTab(tabId, { service: closedBy });
      report.closed++;
    } catch (error) {
      report.failed++;
      logger().error('could not close a tab', { tabId, closedBy, error: serializeError(error) });
    }
  }
  return report;
}

/**
 * The close of what a payer's ended authorisation opened (docs/tabs.md "Rotation and revocation"):
 * every open tab of the payer (a rotation of the account key: the key's tabs and its grants'), or
 * those opened under one grant (its revocation), each closed at what it used as the payer's own
 * close does (`closedBy: "payer"`). Every tab is tried; if any could not be closed the whole call
 * fails (503, retry) after the others closed, so the rotation or the revocation that asked is
 * answered as failed, never as done with a tab left taking uses: asking again closes the rest
 * (a closed tab answers as it is). Answers the tabs it closed.
 */
export async function closePayerTabs(userId: string, only: { grantId?: string } = {}): Promise<Tab[]> {
  const closed: Tab[] = [];
  let failure: unknown;
  for (const tabId of await listUserOpenTabIds(userId, only)) {
    try {
      closed.push(await closeTab(tabId, { userId }));
    } catch (error) {
      failure ??= error;
      logger().error('could not close a tab', { tabId, userId, ...only, error: serializeError(error) });
    }
  }
  if (failure !== undefined) throw failure instanceof ServiceBusyError ? failure : new ServiceBusyError(failure);
  return closed;
}
