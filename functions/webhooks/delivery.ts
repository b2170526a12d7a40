/**
 * The delivery worker: one SQS message = one event for one endpoint. Each receive is one attempt:
 * sign (Standard Webhooks: `webhook-id` = the event id, the same on every retry; `webhook-timestamp`
 * and `webhook-signature` of this attempt), POST (functions/webhooks/sender.ts: safe address, 5 s,
 * no redirects, a small read), record the attempt, and then:
 * - 2xx: done (the message is deleted);
 * - otherwise, with attempts left: the message's visibility is pushed out by the next delay of the
 *   schedule (ChangeMessageVisibility) and it is reported as a batch item failure, so SQS hands it
 *   back then; attempts are counted in a small item per (endpoint, event), not by SQS's
 *   approximate receive count;
 * - the last attempt failed: the delivery is recorded `dead` (visible in the deliveries list) and
 *   the message deleted. A test `ping` has one attempt only: failed, it is `dead` at once. Messages that keep crashing the worker go to the DLQ by the redrive policy.
 * A worker that dies after sending but before recording loses nothing: the message reappears
 * when its visibility timeout ends and is sent again, with the same `webhook-id` (at least once).
 *
 * An endpoint that keeps failing is backed off (core/webhooks.ts `breakerDecision`): while it is,
 * its deliveries are not sent but held (an attempt recorded `not sent`, the message's visibility
 * pushed past the back-off), which costs a few milliseconds instead of a send timeout on the
 * worker every tenant shares; when the back-off ends one delivery probes it. Holding counts as an
 * attempt, so a message is received at most as often as the schedule allows (the DLQ's redrive
 * count holds) and a delivery still ends, `dead`, when its schedule does.
 * Once a 2xx is recorded for an (endpoint, event), any later message for that pair is dropped
 * unsent ('duplicate'): a stream batch the dispatcher handles twice, or an operator's re-dispatch
 * (bin/operator/redispatch.ts), delivers an event to an endpoint once. Two messages for the same
 * pair handled at the same moment can both be sent (the check precedes the send): duplicates stay
 * possible, as "at least once" says, only rarer.
 */
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { Webhook } from 'standardwebhooks';
import { config } from '../config';
import { breakerDecision, DEFAULT_RETRY_SCHEDULE_SECONDS, MAX_ERROR_CHARS, PROBE_MARGIN_MS, retryDelaySeconds } from '../core/webhooks';
import { logger } from '../observability/logger';
import { serializeError } from '../observability/serialize-error';
import { type DeliveryMessage, delayRedelivery, parseDeliveryMessage } from '../queue/webhook-queue';
import {
  claimProbe,
  getWebhook,
  recordEndpointFailure,
  recordEndpointSuccess,
  type StoredWebhook,
} from '../store/events/webhook.repository';
import { markDelivered, nextAttemptNumber, recordDeliveryAttempt } from '../store/events/webhook-delivery.repository';
import { openSecret } from '../store/events/webhook-secret';
import { eventWithApprovalToken } from '../use-cases/charges/approval-token';
import { type SendOutcome, sendWebhook } from './sender';

export const USER_AGENT = 'AgentPaymentService-Webhooks/1';

/** Points between the steps of one attempt; tests throw from them to simulate a crash there. */
export interface DeliveryHooks {
  afterSend?: (message: DeliveryMessage, outcome: SendOutcome) => void | Promise<void>;
}

export interface DeliveryDeps {
  hooks?: DeliveryHooks;
  clock?: () => Date;
}

/** `held`: the endpoint is backed off; `duplicate`: the event already reached this endpoint; in neither case was anything sent. */
export type AttemptResult = 'delivered' | 'retry' | 'held' | 'dead' | 'dropped' | 'duplicate';

/** The retry schedule in force (config or the default spanning > 24 h). */
export const retrySchedule = (): readonly number[] => config().WEBHOOK_RETRY_SCHEDULE_SECONDS ?? DEFAULT_RETRY_SCHEDULE_SECONDS;

/** Runs one batch; failed records (retry scheduled, or an error) are reported, the rest deleted. */
export async function deliverBatch(records: readonly SQSRecord[], deps: DeliveryDeps = {}): Promise<SQSBatchResponse> {
  const results = await Promise.all(
    records.map(async (record) => {
      try {
        const result = await deliverRecord(record, deps);
        return result === 'retry' || result === 'held' ? record.messageId : undefined;
      } catch (error) {
        logger().error('webhook delivery attempt failed to complete; SQS will hand it back', {
          messageId: record.messageId,
          error: serializeError(error),
        });
        return record.messageId;
      }
    }),
  );
  return { batchItemFailures: results.filter((id): id is string => id !== undefined).map((itemIdentifier) => ({ itemIdentifier })) };
}

/** One attempt at one message. */
export async function deliverRecord(record: SQSRecord, deps: DeliveryDeps = {}): Promise<AttemptResult> {
  const clock = deps.clock ?? (() => new Date());
  const message = parseDeliveryMessage(record.body);
  if (!message) {
    logger().warn('dropping a message that is not a webhook delivery', { messageId: record.messageId });
    return 'dropped';
  }
  const endpoint = await getWebhook(message.owner, message.webhookId);
  // Deleted since: its events are no longer wanted.
  if (!endpoint) return 'dropped';
  const cfg = config();
  const decision = breakerDecision(endpoint.health, clock().getTime(), message.type === 'ping');
  let probe = false;
  if (decision.kind === 'hold') return hold(record, message, endpoint, decision.until, clock());
  if (decision.kind === 'probe') {
    const probeUntil = clock().getTime() + cfg.WEBHOOK_TIMEOUT_MS + PROBE_MARGIN_MS;
    // Another worker's delivery is the probe: wait for its outcome.
    if (!(await claimProbe(message.owner, message.webhookId, decision.seen, probeUntil))) {
      return hold(record, message, endpoint, probeUntil, clock());
    }
    probe = true;
  }
  const secret = await openSecret(endpoint.sealedSecret, { owner: message.owner, webhookId: message.webhookId });
  const sentAt = clock();
  const attempt = await nextAttemptNumber(message.webhookId, message.eventId, sentAt);
  if (attempt === undefined) {
    logger().info('webhook already delivered to this endpoint; not sent again', {
      webhookId: message.webhookId,
      eventId: message.eventId,
      type: message.type,
    });
    return 'duplicate';
  }
  // The approval link's token is never stored (outbox, queue, deliveries): it is derived here.
  const body = await eventWithApprovalToken(message.type, message.body);
  const signature = new Webhook(secret).sign(message.eventId, sentAt, body);
  const outcome = await sendWebhook({
    url: endpoint.url,
    body,
    headers: {
      'webhook-id': message.eventId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signature,
      'user-agent': USER_AGENT,
    },
    timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
    policy: { allowLoopback: cfg.WEBHOOK_ALLOW_LOOPBACK },
  });
  await deps.hooks?.afterSend?.(message, outcome);
  if (outcome.ok) {
    const { failureStreak, backoffUntil } = endpoint.health;
    if (probe || failureStreak > 0 || backoffUntil !== undefined) await recordEndpointSuccess(message.owner, message.webhookId);
  } else {
    await recordEndpointFailure(message.owner, message.webhookId, { now: clock(), probe, failedProbes: endpoint.health.failedProbes });
  }

  return recordOutcome(record, message, { attempt, sentAt, outcome });
}

/** What one sent attempt leaves: its delivery record, and delivered, retried later, or dead after its last attempt. */
async function recordOutcome(
  record: SQSRecord,
  message: DeliveryMessage,
  sent: { attempt: number; sentAt: Date; outcome: SendOutcome },
): Promise<AttemptResult> {
  const { attempt, sentAt, outcome } = sent;
  const base = {
    webhookId: message.webhookId,
    eventId: message.eventId,
    type: message.type,
    attempt,
    createdAt: sentAt.toISOString(),
    durationMs: outcome.durationMs,
    ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
    ...(outcome.error ? { error: outcome.error.slice(0, MAX_ERROR_CHARS) } : {}),
  };
  const ctx = { webhookId: message.webhookId, eventId: message.eventId, type: message.type, attempt };
  if (outcome.ok) {
    await Promise.all([recordDeliveryAttempt({ ...base, status: 'succeeded' }), markDelivered(message.webhookId, message.eventId, sentAt)]);
    logger().info('webhook delivered', { ...ctx, statusCode: outcome.statusCode, durationMs: outcome.durationMs });
    return 'delivered';
  }
  // A test ping is tried once: its owner is watching the deliveries list, and a ping retried for a
  // day would let anyone who pings a dead URL keep the shared worker busy.
  const delay = message.type === 'ping' ? undefined : retryDelaySeconds(retrySchedule(), attempt);
  if (delay === undefined) {
    await recordDeliveryAttempt({ ...base, status: 'dead' });
    logger().warn('webhook delivery dead after its last attempt', { ...ctx, statusCode: outcome.statusCode, error: outcome.error });
    return 'dead';
  }
  const nextAttemptAt = new Date(sentAt.getTime() + delay * 1000).toISOString();
  await recordDeliveryAttempt({ ...base, status: 'failed', nextAttemptAt });
  await delayRedelivery(record.receiptHandle, delay);
  logger().info('webhook delivery failed; retry scheduled', {
    ...ctx,
    statusCode: outcome.statusCode,
    error: outcome.error,
    nextAttemptAt,
  });
  return 'retry';
}

/**
 * A delivery to a backed-off endpoint: not sent. It counts as an attempt (recorded `failed`, not
 * sent, or `dead` when it was the last) and the message comes back after its schedule's delay or
 * when the back-off ends, whichever is later, spread a little so held messages do not all return
 * in the same second.
 */
async function hold(
  record: SQSRecord,
  message: DeliveryMessage,
  endpoint: StoredWebhook,
  untilMs: number,
  now: Date,
): Promise<AttemptResult> {
  const attempt = await nextAttemptNumber(message.webhookId, message.eventId, now);
  // Already delivered to this endpoint (a re-dispatch, a batch handled twice): nothing to hold.
  if (attempt === undefined) return 'duplicate';
  const error = `not sent: endpoint backed off after ${endpoint.health.failureStreak} consecutive failures`;
  const base = {
    webhookId: message.webhookId,
    eventId: message.eventId,
    type: message.type,
    attempt,
    createdAt: now.toISOString(),
    durationMs: 0,
    error,
  };
  const ctx = { webhookId: message.webhookId, eventId: message.eventId, type: message.type, attempt };
  const scheduled = retryDelaySeconds(retrySchedule(), attempt);
  if (scheduled === undefined) {
    await recordDeliveryAttempt({ ...base, status: 'dead' });
    logger().warn('webhook delivery dead: its endpoint was still backed off at its last attempt', ctx);
    return 'dead';
  }
  const remaining = Math.max(0, Math.ceil((untilMs - now.getTime()) / 1000));
  const delay = Math.max(scheduled, remaining + Math.floor(Math.random() * Math.max(1, remaining / 10)));
  const nextAttemptAt = new Date(now.getTime() + delay * 1000).toISOString();
  await recordDeliveryAttempt({ ...base, status: 'failed', nextAttemptAt });
  await delayRedelivery(record.receiptHandle, delay);
  logger().info('webhook delivery held: its endpoint is backed off', { ...ctx, nextAttemptAt });
  return 'held';
}
