/**
 * Tabs as the API shows them (DESIGN §29, docs/tabs.md): the tab, a use's answer, a use in the
 * list, and a tab in its payer's list (with what it holds and who holds it). Amounts are JSON
 * numbers of the tab's currency, as every amount the API answers.
 */
import type { Tab, TabUsage } from '../core/tabs';
import { jsonAmount } from './json';

/** A tab: `limit` held, `used` so far; `closedAt`/`closedBy`/`chargeId` say how it ended and what was captured. */
export function tabView(tab: Tab) {
  return {
    id: tab.id,
    status: tab.status,
    currency: tab.currency,
    limit: jsonAmount(tab.limit, tab.currency),
    used: jsonAmount(tab.used, tab.currency),
    usageCount: tab.usageCount,
    grantId: tab.grantId ?? null,
    expiresAt: tab.expiresAt,
    createdAt: tab.createdAt,
    chargeId: tab.chargeId,
    closedAt: tab.closedAt ?? null,
    closedBy: tab.closedBy ?? null,
  };
}

/** A use's answer (and its replay): what this use took, what the tab has used after it, what is left. */
export function usageAnswerView(usage: TabUsage) {
  return {
    tabId: usage.tabId,
    usageId: usage.usageId,
    amount: jsonAmount(usage.amount, usage.currency),
    used: jsonAmount(usage.usedAfter, usage.currency),
    remaining: jsonAmount(usage.limit - usage.usedAfter, usage.currency),
  };
}

/** A use in the tab's list. */
export function usageView(usage: TabUsage) {
  return { ...usageAnswerView(usage), description: usage.description, createdAt: usage.createdAt };
}

/** A tab in its payer's list: the tab, its description and agent, and what it holds of the payer's money now. */
export function userTabView(tab: Tab & { description: string; agentName?: string }) {
  return {
    ...tabView(tab),
    description: tab.description,
    agent: { id: tab.agentId, name: tab.agentName ?? null },
    held: jsonAmount(tab.status === 'CLOSED' ? 0 : tab.limit, tab.currency),
  };
}
