/**
 * The ledger audit's rows of tabs (DESIGN §29, ledger-rows.mapper.ts): a tab's limit, what it used
 * and its status, and each use's amount, read so the audit can tie them to the tab's hold charge
 * (functions/audit/tab-checks.ts). A tab holds no money of its own: its hold does. Pure.
 */
import type { Minor } from '../../core/money';
import type { Item } from './ledger-rows.reader';

export interface TabRow {
  kind: 'tab';
  tabId: string;
  chargeId: string;
  status: string;
  limit: Minor;
  used: Minor;
  usageCount: number;
}

export interface TabUsageRow {
  kind: 'tabUsage';
  tabId: string;
  amount: Minor;
}

const whole = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) ? value : Number.NaN);

export function tabRows(items: readonly Item[]): TabRow[] {
  return items.map((item) => ({
    kind: 'tab',
    tabId: String(item.tabId),
    chargeId: String(item.chargeId),
    status: String(item.tabStatus),
    limit: whole(item.tabLimit),
    used: whole(item.used),
    usageCount: whole(item.usageCount),
  }));
}

export function tabUsageRows(items: readonly Item[]): TabUsageRow[] {
  return items.map((item) => ({ kind: 'tabUsage', tabId: String(item.PK).slice('TAB#'.length), amount: whole(item.amount) }));
}
