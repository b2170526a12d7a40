/**
 * Grant limit alerts, derived from the table's stream by the webhook dispatcher (DESIGN §27,
 * docs/webhooks.md "Grant limit alerts"), so a charge's own path gains no request:
 * - `grant.limit.approaching`: a grant item's MODIFY whose counters crossed 80% of a windowed
 *   limit (old image below, new image at or above: core/grant-alerts.ts `approachingAlerts`);
 * - `grant.limit.reached`: a FAILED charge's INSERT that a grant limit refused (the charge carries
 *   which limit and window, `Charge.grantLimit`; the grant is read here, after the fact).
 * Each is written once per limit window (store/identity/grant-alert.repository.ts: a conditional
 * marker on the grant item in one transaction with the outbox item, which the dispatcher then
 * delivers as any other event). Sent to the payer's endpoints.
 */
import { grantAlertView } from '../../contracts/grants';
import { derivedEventId, type OutboxEvent } from '../../core/events';
import { alertMarker, approachingAlerts, type LimitAlert, spentInWindow } from '../../core/grant-alerts';
import type { Grant } from '../../core/grants';
import { toGrant } from '../../store/identity/grant.mapper';
import { getGrant } from '../../store/identity/grant.repository';
import { sendGrantAlertOnce } from '../../store/identity/grant-alert.repository';

/** A stream record's images, as plain items. */
export interface ChangedItem {
  eventName?: string;
  item: Record<string, unknown>;
  old?: Record<string, unknown>;
}

/** Sends the alerts one stream record calls for (none for most records); how many were written now. */
export async function sendGrantAlerts(change: ChangedItem, now: Date = new Date()): Promise<number> {
  const { eventName, item, old } = change;
  if (eventName === 'MODIFY' && item.type === 'Grant' && old?.type === 'Grant') {
    const after = toGrant(item);
    const alerts = approachingAlerts(toGrant(old), after);
    let sent = 0;
    for (const alert of alerts) if (await send(after, alert, now)) sent++;
    return sent;
  }
  if (eventName === 'INSERT' && item.type === 'Charge' && item.status === 'FAILED' && typeof item.grantId === 'string') {
    const mark = item.grantLimit as { limit?: unknown; window?: unknown } | undefined;
    if (!mark || typeof mark.limit !== 'string' || typeof mark.window !== 'string') return 0;
    const grant = await getGrant(String(item.userId), item.grantId);
    const limit = mark.limit as LimitAlert['limit'];
    const max = grant?.limits[limit];
    if (!grant || max === undefined) return 0;
    const alert: LimitAlert = {
      type: 'grant.limit.reached',
      limit,
      window: mark.window,
      spent: spentInWindow(grant, limit, mark.window),
      max,
    };
    return (await send(grant, alert, now, String(item.id))) ? 1 : 0;
  }
  return 0;
}

function send(grant: Grant, alert: LimitAlert, now: Date, chargeId?: string): Promise<boolean> {
  const event: OutboxEvent = {
    // The same alert, however often asked for, is the same event (its marker lets one through).
    id: derivedEventId(`grant-alert|${grant.id}|${alert.type}|${alert.limit}|${alert.window}`, now),
    type: alert.type,
    createdAt: now.toISOString(),
    owner: { kind: 'user', id: grant.userId },
    data: grantAlertView(grant, alert, now, chargeId),
  };
  return sendGrantAlertOnce({ userId: grant.userId, grantId: grant.id }, alertMarker(alert.type, alert.limit), alert.window, event, now);
}
