/**
 * Fault injection at the SDK client: DynamoDB Local serialises transactions and never throttles,
 * so the faults DynamoDB produces under contention are thrown here, in front of the real call,
 * as the same exception classes the SDK raises.
 */
import { ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { db } from '../../functions/store/client';

export type Fault = 'conflict' | 'throttle';

let seq = 0;

/** Makes the next `times` commands named `command` fail with `fault`; returns a remover. */
export function injectFault(command: string, fault: Fault, times: number): { hits: () => number; remove: () => void } {
  const name = `fault-${++seq}`;
  let hits = 0;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === command && hits < times) {
        hits += 1;
        if (fault === 'conflict') {
          throw new TransactionCanceledException({
            message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
            $metadata: {},
            CancellationReasons: [{ Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }],
          });
        }
        throw new ProvisionedThroughputExceededException({ message: 'Rate of requests exceeds the allowed throughput.', $metadata: {} });
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { hits: () => hits, remove: () => db().middlewareStack.remove(name) };
}
