/**
 * What this container knows of tabs: the tabs it has seen, as it last saw them. Only ever behind
 * the real tab (uses only add to `used`, a CLOSED tab never reopens), so a use judged by it is
 * refused by the tab item's condition when it is stale, never accepted wrongly.
 */
import type { Tab } from '../../core/tabs';

/** The agent a tab id names (core/ids.ts `newTabId`): another agent's tab is "not found" without a read. */
export const agentOfTab = (tabId: string): string => tabId.slice(27);

/** The tabs this container has seen, as it last saw them (behind the real one at worst: uses only add). */
export const known = new Map<string, Tab>();
const KNOWN_MAX = 10_000;

export function remember(tab: Tab): void {
  if (known.size >= KNOWN_MAX && !known.has(tab.id)) known.clear();
  known.set(tab.id, tab);
}

/** Forgets every tab (tests start from a cold container). */
export function forgetTabs(): void {
  known.clear();
}
