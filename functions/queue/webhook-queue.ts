/**
 * The webhook delivery queue: one message per (event, endpoint), sent by the dispatcher, consumed
 * by the delivery worker, which also pushes a failed message's next appearance out by the retry
 * delay (ChangeMessageVisibility, at most 12 h per change). The client is built once per container.
 */
import { ChangeMessageVisibilityCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { config } from '../config';
import { EVENT_ID_PATTERN } from '../core/events';
import { WEBHOOK_ID_PATTERN } from '../core/webhooks';
import { lazySqsClient, parseMessage } from './sqs';

export const deliveryMessageSchema = z.strictObject({
  webhookId: z.string().regex(WEBHOOK_ID_PATTERN),
  owner: z.string().regex(/^(agent|user)#[a-z0-9]{27}$/),
  eventId: z.string().regex(EVENT_ID_PATTERN),
  type: z.string().min(1).max(64),
  /** The exact JSON body to sign and send (written by the outbox). */
  body: z.string().min(2),
});
export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;

const sqs = lazySqsClient({ maxAttempts: 3, requestTimeoutMs: 5_000 });
/** The delivery queue's client (tests inject faults into its middleware stack). */
export const webhookSqs = sqs;

function queueUrl(): string {
  const url = config().WEBHOOK_QUEUE_URL;
  if (!url) throw new Error('WEBHOOK_QUEUE_URL is not configured');
  return url;
}

/** Sends the messages in batches of 10; throws unless every one was accepted. */
export async function sendDeliveryMessages(messages: readonly DeliveryMessage[]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    const chunk = messages.slice(i, i + 10);
    const out = await sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl(),
        Entries: chunk.map((m, n) => ({ Id: String(n), MessageBody: JSON.stringify(m) })),
      }),
    );
    if ((out.Failed ?? []).length > 0) throw new Error(`delivery queue refused ${out.Failed?.length} message(s)`);
  }
}

/** Makes a received message reappear after `seconds` (the retry delay). */
export async function delayRedelivery(receiptHandle: string, seconds: number): Promise<void> {
  await sqs().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl(),
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: Math.min(seconds, 43_200),
    }),
  );
}

/** A message body, or undefined for a poison message. */
export const parseDeliveryMessage = (body: string): DeliveryMessage | undefined => parseMessage(deliveryMessageSchema, body);
