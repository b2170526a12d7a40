/**
 * IAM for the table, locally. The local stack runs every function in one process on one DynamoDB
 * client and marks each invocation with the function's name (bin/local/function-scope.ts); a
 * middleware here turns each request into what IAM authorizes on AWS (an action, the table or an
 * index, and `dynamodb:LeadingKeys`: the partition keys it touches, an index's own for a Query of
 * it; one request per item of a transaction) and hands it to the caller. `watchTableGrants`
 * checks each against the sending function's grant (routes.ts, store/access.ts), so a store call
 * outside a grant fails the test that makes it, as AccessDeniedException would on AWS.
 */
import { currentFunction } from '../../bin/local/function-scope';
import { ROUTES } from '../../functions/api/routes';
import { BACKGROUND_GRANTS, type GrantStatement, grantStatements, type TableGrant } from '../../functions/store/access';
import { db } from '../../functions/store/client';
import { INDEXES, TABLE_KEYS } from '../../functions/store/table';

/** One request as IAM authorizes it. */
export interface TableRequest {
  /** The function that sent it. */
  fn: string;
  action: string;
  /** The index a Query reads; undefined: the table. */
  index?: string;
  /** `dynamodb:LeadingKeys`. */
  leadingKeys: string[];
}

type Input = Record<string, unknown>;

/** A key attribute's value, native (the document client's input) or marshalled ({S: …}). */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && 'S' in value) return String((value as { S: unknown }).S);
  return String(value);
}

const partitionKeyOf = (key: unknown): string => text((key as Input | undefined)?.[TABLE_KEYS.partitionKey]);

/** The partition-key value a Query's KeyConditionExpression asks for (the index's for an index). */
function queriedPartition(input: Input): string {
  const index = INDEXES.find((i) => i.indexName === input.IndexName);
  const attribute = index ? index.partitionKey : TABLE_KEYS.partitionKey;
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const [, name, placeholder] of String(input.KeyConditionExpression ?? '').matchAll(/(#?\w+)\s*=\s*(:\w+)/g)) {
    if ((names[name ?? ''] ?? name) === attribute) return text(values[placeholder ?? '']);
  }
  return '';
}

/** The requests IAM sees in one SDK command. */
export function authorizedRequests(command: string, input: Input): Omit<TableRequest, 'fn'>[] {
  const one = (action: string, key: unknown) => [{ action: `dynamodb:${action}`, leadingKeys: [partitionKeyOf(key)] }];
  switch (command) {
    case 'GetItemCommand':
      return one('GetItem', input.Key);
    case 'PutItemCommand':
      return one('PutItem', input.Item);
    case 'UpdateItemCommand':
      return one('UpdateItem', input.Key);
    case 'DeleteItemCommand':
      return one('DeleteItem', input.Key);
    case 'QueryCommand':
      return [
        {
          action: 'dynamodb:Query',
          ...(typeof input.IndexName === 'string' ? { index: input.IndexName } : {}),
          leadingKeys: [queriedPartition(input)],
        },
      ];
    case 'BatchGetItemCommand':
      return [
        {
          action: 'dynamodb:BatchGetItem',
          leadingKeys: Object.values((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap((r) =>
            (r.Keys ?? []).map(partitionKeyOf),
          ),
        },
      ];
    case 'TransactWriteItemsCommand':
      return ((input.TransactItems ?? []) as Input[]).flatMap((item) => {
        if (item.Put) return one('PutItem', (item.Put as Input).Item);
        if (item.Update) return one('UpdateItem', (item.Update as Input).Key);
        if (item.Delete) return one('DeleteItem', (item.Delete as Input).Key);
        return one('ConditionCheckItem', (item.ConditionCheck as Input | undefined)?.Key);
      });
    case 'TransactGetItemsCommand':
      // Each item is authorised as its GetItem, as in a TransactWriteItems.
      return ((input.TransactItems ?? []) as Input[]).flatMap((item) => one('GetItem', (item.Get as Input | undefined)?.Key));
    default:
      // Scan, BatchWriteItem, …: no grant has them.
      return [{ action: `dynamodb:${command.replace(/Command$/, '')}`, leadingKeys: [] }];
  }
}

/** IAM's StringLike: `*` any run of characters, `?` any one. */
export function stringLike(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(value);
}

/** Whether one of `statements` allows the request (ForAllValues: every leading key matches a pattern). */
export function allows(statements: readonly GrantStatement[], request: Omit<TableRequest, 'fn'>): boolean {
  return statements.some(
    (s) =>
      s.actions.includes(request.action) &&
      s.index === request.index &&
      request.leadingKeys.every((key) => s.leadingKeys.some((pattern) => stringLike(pattern, key))),
  );
}

/** Every function's grant by name: the routes', then the background functions'. */
export function tableGrantOf(fn: string): TableGrant | undefined {
  return ROUTES.find((r) => r.name === fn)?.table ?? (BACKGROUND_GRANTS as Record<string, TableGrant>)[fn];
}

let installed = 0;

/**
 * Hands every request a function sends through the shared client to `onRequest` until the
 * returned function is called. Requests outside any function (a test's own setup) are skipped.
 * The client is rebuilt when the configuration is reset: install again after that.
 */
export function recordTableRequests(onRequest: (request: TableRequest) => void): () => void {
  const name = `recordTableRequests${++installed}`;
  const client = db();
  client.middlewareStack.add(
    (next, context) => (args) => {
      const fn = currentFunction();
      if (fn) for (const r of authorizedRequests(context.commandName ?? '', args.input as Input)) onRequest({ fn, ...r });
      return next(args);
    },
    { step: 'initialize', name },
  );
  return () => void client.middlewareStack.remove(name);
}

/** A request no grant allows, said the way a reviewer needs it. */
export const describeRequest = (r: TableRequest): string =>
  `${r.fn} sent ${r.action} on ${r.index ? `index ${r.index}` : 'the table'} with leading keys ${JSON.stringify(r.leadingKeys)}`;

/**
 * Checks every request against its function's grant; `denied` lists what IAM would refuse. The
 * test stack calls it on start and fails its stop when anything was denied.
 */
export function watchTableGrants(): { denied: string[]; stop: () => void } {
  const denied: string[] = [];
  const statements = new Map<string, GrantStatement[]>();
  const stop = recordTableRequests((request) => {
    let granted = statements.get(request.fn);
    if (!granted) {
      granted = grantStatements(tableGrantOf(request.fn) ?? {});
      statements.set(request.fn, granted);
    }
    if (!allows(granted, request)) denied.push(describeRequest(request));
  });
  return { denied, stop };
}
