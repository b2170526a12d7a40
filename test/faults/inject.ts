/**
 * Fault injection on the service's own SDK clients (the DynamoDB document client of
 * functions/store/client.ts and the SQS client of functions/queue/payout-queue.ts): a middleware
 * that throws, for the first `times` commands that match, the exception the SDK itself raises.
 *
 * Where it sits decides what it models:
 *  - `past-sdk-retries` (step initialize, outside the SDK's retry loop): the SDK already gave up,
 *    so the service's own handling sees the error at once;
 *  - `inside-sdk-retries` (step deserialize, inside the loop): DynamoDB answered with the error
 *    and the SDK's retry strategy gets its say first, as in production;
 *  - `after-response` (step initialize, after the call returned): the request reached DynamoDB and
 *    took effect, and then its answer was lost (a timeout past the SDK's retries).
 * DynamoDB Local serialises transactions and never throttles, so this is how those faults exist.
 */
import { ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { sqs } from '../../functions/queue/payout-queue';
import { db } from '../../functions/store/client';

type Input = Record<string, unknown>;

export interface Injection {
  /** How many commands it has failed so far. */
  hits(): number;
  remove(): void;
}

export interface InjectOptions {
  /** SDK command name, e.g. `TransactWriteItemsCommand`, `SendMessageCommand`. */
  command: string;
  /** Further narrows which commands fail (the input is the document client's, unmarshalled). */
  match?: (input: Input) => boolean;
  times: number;
  error: () => Error;
  where?: 'past-sdk-retries' | 'inside-sdk-retries' | 'after-response';
  client?: 'dynamodb' | 'sqs';
}

let seq = 0;

export function inject(opts: InjectOptions): Injection {
  // Both stacks take the same middleware; one type is enough to add it.
  const stack = (opts.client === 'sqs' ? sqs().middlewareStack : db().middlewareStack) as ReturnType<typeof db>['middlewareStack'];
  const name = `bench-fault-${++seq}`;
  let hits = 0;
  const maybeFail = (commandName: string | undefined, input: unknown) => {
    if (commandName === opts.command && hits < opts.times && (opts.match?.(input as Input) ?? true)) {
      hits += 1;
      throw opts.error();
    }
  };
  if (opts.where === 'after-response') {
    stack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        maybeFail(context.commandName, args.input);
        return out;
      },
      { step: 'initialize', name },
    );
  } else if (opts.where === 'inside-sdk-retries') {
    stack.add(
      (next, context) => async (args) => {
        maybeFail(context.commandName, args.input);
        return next(args);
      },
      { step: 'deserialize', name },
    );
  } else {
    stack.add(
      (next, context) => async (args) => {
        maybeFail(context.commandName, args.input);
        return next(args);
      },
      { step: 'initialize', name },
    );
  }
  return { hits: () => hits, remove: () => void stack.remove(name) };
}

/** What DynamoDB answers when another transaction holds an item of this one. */
export const transactionConflict = () =>
  new TransactionCanceledException({
    message: 'Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]',
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: [{ Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }],
  });

/** What DynamoDB answers when a table or partition is over its throughput. */
export const throttled = () =>
  new ProvisionedThroughputExceededException({
    message: 'The level of configured provisioned throughput for the table was exceeded.',
    $metadata: { httpStatusCode: 400 },
  });

/** What the SDK's HTTP handler throws when DynamoDB does not answer within `requestTimeout`. */
export const timedOut = () =>
  Object.assign(new Error('@smithy/node-http-handler - the request socket timed out after 5000 ms of inactivity.'), {
    name: 'TimeoutError',
  });

/** The process died at this point (for the service, the call simply never returned normally). */
export const crash = () => new Error('injected crash: the worker died here');

type TransactItems = { Put?: { Item?: Input }; Update?: { Key?: Input }; Delete?: { Key?: Input } }[];

const items = (input: Input) => (input.TransactItems as TransactItems | undefined) ?? [];
/** The PK of a key or item, as the document client holds it or (inside the SDK) marshalled. */
const pk = (key: Input | undefined): string => {
  const v = key?.PK;
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { S?: unknown }).S === 'string') return (v as { S: string }).S;
  return '';
};

/** A withdrawal's commit: the transaction that Puts a payout. */
export const isWithdrawalCommit = (input: Input) => items(input).some((i) => pk(i.Put?.Item).startsWith('PAYOUTS#'));
/** A payout's final transition (COMPLETED, or FAILED with refund): it deletes the agent's lock. */
export const isPayoutFinalize = (input: Input) => items(input).some((i) => pk(i.Delete?.Key).startsWith('PAYOUTLOCK#'));
/** An admin credit: the transaction that Puts its CREDITS# record (not a webhook or fan-out write of the same process). */
export const isCredit = (input: Input) => items(input).some((i) => pk(i.Put?.Item).startsWith('CREDITS#'));
/** A charge: the transaction that Puts a charge. */
export const isCharge = (input: Input) => items(input).some((i) => pk(i.Put?.Item).startsWith('CHARGES#'));
/** The worker saving rail progress before it acts (UpdateItem on the payout setting railState). */
export const isRailCheckpoint = (input: Input) =>
  pk(input.Key as Input).startsWith('PAYOUTS#') && String(input.UpdateExpression ?? '').includes('railState');
/** The worker saving an x402 refund's rail progress (its signed transfer) before it sends it (DESIGN §28). */
export const isRefundRailCheckpoint = (input: Input) =>
  pk(input.Key as Input).startsWith('X402REFUND#') && String(input.UpdateExpression ?? '').includes('railState');
/** An x402 refund's final transition (COMPLETED, or FAILED with the money back): a transaction updating the refund item. */
export const isRefundFinalize = (input: Input) => items(input).some((i) => pk(i.Update?.Key).startsWith('X402REFUND#'));
/** A transaction that Puts an idempotency record (a money movement's, or a creation's with an Idempotency-Key). */
export const writesIdempotencyRecord = (input: Input) => items(input).some((i) => pk(i.Put?.Item).startsWith('IDEM#'));
