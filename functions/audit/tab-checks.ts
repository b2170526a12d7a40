/**
 * The ledger audit's check of tabs (DESIGN §29, docs/tabs.md "Audit"): a tab holds nothing itself,
 * its hold does, so each tab is tied to its hold charge (held = limit − released, captured = used)
 * and to its uses (they add up to `used`, and number `usageCount`). Pure; one sentence per break.
 */
import type { ChargeRow } from '../store/audit/ledger-rows.charges';
import type { TabRow, TabUsageRow } from '../store/audit/ledger-rows.tabs';

export function tabProblems(rows: {
  tabs?: readonly TabRow[];
  tabUsages?: readonly TabUsageRow[];
  charges: readonly ChargeRow[];
}): string[] {
  const problems: string[] = [];
  const charges = new Map(rows.charges.map((c) => [c.chargeId, c]));
  const uses = new Map<string, { sum: number; count: number }>();
  for (const u of rows.tabUsages ?? []) {
    const seen = uses.get(u.tabId) ?? { sum: 0, count: 0 };
    uses.set(u.tabId, { sum: seen.sum + u.amount, count: seen.count + 1 });
  }
  for (const tab of rows.tabs ?? []) {
    const where = `tab ${tab.tabId}`;
    const { sum, count } = uses.get(tab.tabId) ?? { sum: 0, count: 0 };
    if (sum !== tab.used || count !== tab.usageCount) {
      problems.push(`${where}: used ${tab.used} in ${tab.usageCount} uses, but its uses add up to ${sum} in ${count}`);
    }
    if (!(tab.used >= 0 && tab.used <= tab.limit)) problems.push(`${where}: used ${tab.used} of a limit of ${tab.limit}`);
    const hold = charges.get(tab.chargeId);
    if (!hold) {
      problems.push(`${where}: its hold ${tab.chargeId} is missing`);
      continue;
    }
    const captured = hold.status === 'SUCCESS' ? hold.amount : 0;
    const authorized = hold.authorizedAmount ?? hold.amount;
    if (authorized !== tab.limit) problems.push(`${where}: a limit of ${tab.limit} but its hold authorized ${authorized}`);
    if (tab.status === 'CLOSED') {
      // Closed: what was used captured, the rest released (held = limit − released).
      if (hold.status === 'PENDING') problems.push(`${where}: CLOSED but its hold is still PENDING`);
      if (captured !== tab.used) problems.push(`${where}: CLOSED having used ${tab.used}, but its hold captured ${captured}`);
    } else if (hold.status !== 'PENDING') {
      problems.push(`${where}: ${tab.status} but its hold is ${hold.status}`);
    }
  }
  return problems;
}
