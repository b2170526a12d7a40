/**
 * A work queue with its dead-letter queue, the shape both pipelines use (payouts, webhook
 * deliveries): both encrypted (SQS-managed keys) and TLS only; a message received
 * `maxReceiveCount` times moves to the DLQ, which keeps it 14 days (SQS's longest) for an operator.
 *
 * The pipelines extend it, so the two queues stay direct children of the pipeline
 * (`Payouts/Queue`, `Payouts/DeadLetterQueue`): their logical ids, hence the queues themselves,
 * are those of every stack deployed before this construct existed.
 */
import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface QueueWithDlqProps {
  /**
   * How long a received message stays hidden: at least six times its consumer's timeout (AWS's
   * guidance for an SQS event source), so a batch Lambda still retries is never handed to a second consumer.
   */
  visibilityTimeout: Duration;
  /** How long the queue keeps a message: longer than any retry schedule on top of it. */
  retentionPeriod: Duration;
  /** Receives before a message moves to the DLQ. */
  maxReceiveCount: number;
}

/**
 * The DLQ's retention: SQS's longest. A standard queue keeps a message's original enqueue time
 * when it moves, so the DLQ must outlive the source queue's retention to keep it at all.
 */
export const DEAD_LETTER_RETENTION = Duration.days(14);

export class QueueWithDlq extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps) {
    super(scope, id);
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: DEAD_LETTER_RETENTION,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: props.visibilityTimeout,
      retentionPeriod: props.retentionPeriod,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
  }
}
