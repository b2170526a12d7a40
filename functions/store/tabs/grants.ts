/**
 * What tabs' repository operations touch, by key family (store/access.ts `uses` reads them beside `STORE`):
 * the tab's own partition, the payer's and the agent's lists of tabs, and a close's settlement.
 */
import type { Partition } from '../table';

export const TAB_STORE = {
  /**
   * What every settlement of a tab's hold also writes, beside settleApproval's or settleReturn's: an
   * approval opens the tab, any other ending closes it, in the same transaction (tab-items.ts). Every
   * function that approves, declines, releases or expires a hold has it.
   */
  settleTabHold: { write: ['tab', 'userTabs', 'agentTabs'] },
  /** The opening's items in the hold's transaction (commitCharge's): the tab and its two entries. */
  commitTabOpening: { write: ['tab', 'userTabs', 'agentTabs'] },
  /** The tab item, a use by its key, a tab's uses: its own partition. */
  getTab: { read: ['tab'] },
  /** A use: the tab item and the use's item, one transaction of the tab's partition. */
  commitTabUsage: { write: ['tab'] },
  listUserTabs: { read: ['userTabs', 'tab'] },
  /**
   * A tab's close: its hold captured for `used` (no kill switch: what was used is owed), the rest back, the tab and its entries
   * CLOSED; once uses raced it, the tab item frozen first (tab.repository.ts `freezeTab`: an update of the `tab` family).
   */
  settleTab: {
    write: ['charge', 'pendingCharge', 'user', 'agentBalanceShard', 'outbox', 'grant', 'statement', 'tab', 'userTabs', 'agentTabs'],
  },
  /** The service's close of open tabs (a kill switch, a block): found by the lists, closed as settleTab closes one. */
  closeTabs: {
    read: ['agentTabs', 'userTabs', 'tab', 'pendingCharge', 'charge'],
    write: ['charge', 'pendingCharge', 'user', 'agentBalanceShard', 'outbox', 'grant', 'statement', 'tab', 'userTabs', 'agentTabs'],
  },
} as const satisfies Record<string, { read?: readonly Partition[]; write?: readonly Partition[] }>;
