/**
 * A local SQS queue that holds nothing: no message visible, in flight (received, not yet deleted
 * or put back) or delayed. Everything sent to it before has then been handled to the end, which is
 * how a test proves a message it sent "did nothing more" without waiting a while for it.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { eventually } from './eventually';

export async function queueDrained(queueUrl: string, what: string, timeoutMs = 15_000): Promise<void> {
  const client = new SQSClient({
    region: 'us-east-1',
    endpoint: new URL(queueUrl).origin,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await eventually(
      `an empty ${what}`,
      async () => {
        const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }));
        const a = out.Attributes ?? {};
        expect({
          visible: Number(a.ApproximateNumberOfMessages ?? 0),
          inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
          delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
        }).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
        return true;
      },
      { timeoutMs },
    );
  } finally {
    client.destroy();
  }
}
