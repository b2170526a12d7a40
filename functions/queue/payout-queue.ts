/**
 * The payout queue: withdrawals (and refunds of x402 payments) travel to the payout worker as `{payoutId, agentId}`. The
 * client is built once per container (keep-alive) and points at local SQS when SQS_ENDPOINT is
 * set. A message only says "look at this payout": the payout item is the truth, so a lost,
 * repeated or replayed message can delay a payout but never pay it twice.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import * as z from 'zod';
import { config } from '../config';
import { lazySqsClient, parseMessage } from './sqs';

export interface PayoutMessage {
  payoutId: string;
  agentId: string;
}

const messageSchema = z.strictObject({
  // A withdrawal's payout (`p…`) or a refund of an x402 payment (`xr…`, DESIGN §28), paid alike.
  payoutId: z.string().regex(/^(?:p|xr)[0-9a-z]{26}$/),
  agentId: z.string().regex(/^a[0-9a-z]{26}$/),
});

/** The shared SQS client. The withdraw response waits for its send (at most ~4 s): fail fast, the reconciler re-sends. */
export const sqs = lazySqsClient({ maxAttempts: 2, requestTimeoutMs: 2_000 });

/** Sends one payout to the worker. Throws when the queue is not configured or refuses. */
export async function sendPayoutMessage(message: PayoutMessage): Promise<void> {
  const queueUrl = config().PAYOUT_QUEUE_URL;
  if (!queueUrl) throw new Error('PAYOUT_QUEUE_URL is not configured');
  const body: PayoutMessage = { payoutId: message.payoutId, agentId: message.agentId };
  await sqs().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(body) }));
}

/** Reads a message body; undefined when it is not a payout message (a poison message). */
export const parsePayoutMessage = (body: string): PayoutMessage | undefined => parseMessage(messageSchema, body);
