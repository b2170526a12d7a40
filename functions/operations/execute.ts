/**
 * The one sequence every API operation runs, whatever calls it (the Lambda handler, the MCP tool,
 * a console form): credentials → Idempotency-Key → query → body → `run` → `render`. The order is
 * the API's order of refusals (docs/reference/conventions.md "Rules that apply everywhere"): a bad key is reported before a bad body, a missing
 * Idempotency-Key before the body's problems.
 */
import { stringify } from 'lossless-json';
import * as z from 'zod';
import { type ApiRequest, type ApiResult, StoredReply } from '../contracts/api';
import { validate } from '../contracts/validation';
import { AGENT_KEY_PREFIX, hashKey, looksLikeKey } from '../core/keys';
import { parseJsonBody } from '../http/body';
import { MISSING_KEY_HEADER } from '../messages/credentials';
import { refuse } from '../messages/refusal';
import { authenticate, authenticateUser, keySent } from '../use-cases/auth';
import { optionalIdempotencyKey, requireIdempotencyKey } from '../use-cases/idempotency';
import type { BodySpec, CallerOf, Credentials, Idempotency, Operation, OperationCall } from './operation';

/** `Authorization: Bearer <agent key>`, the x402 routes' other way of sending the agent's key. */
const BEARER = /^Bearer\s+(\S+)\s*$/i;
const ANY_OBJECT = z.record(z.string(), z.unknown());

export interface ExecuteOptions {
  /** The API's public address, for an operation that hands out links (`links: true`). */
  baseUrl?: () => string;
}

/** Runs `op` for `req` and answers it. */
export async function execute<C extends Credentials, I extends Idempotency, B, Q, O>(
  op: Operation<C, I, B, Q, O>,
  req: ApiRequest,
  options: ExecuteOptions = {},
): Promise<ApiResult> {
  const caller = (await callerOf(op.credentials, req)) as CallerOf<C>;
  const idempotencyKey = keyOf(op.idempotency, req) as OperationCall<C, I, B, Q>['idempotencyKey'];
  const query = (op.query ? validate(op.query, req.query) : undefined) as Q;
  const body = (op.body ? bodyOf(op.body, req) : undefined) as B;
  const baseUrl = op.links && options.baseUrl ? options.baseUrl() : '';
  const outcome = await op.run({ caller, idempotencyKey, params: req.params, query, body, baseUrl });
  return outcome instanceof StoredReply ? outcome.toResult() : op.render(outcome, { baseUrl });
}

/** The input of a call whose caller an adapter has already recognised (`runFor`): parts as values, not HTTP. */
export interface CallInput {
  idempotencyKey?: string;
  params?: Readonly<Record<string, string | undefined>>;
  /** The query's fields as strings, as a query string gives them. */
  query?: Readonly<Record<string, string | undefined>>;
  /** The body as the JSON parser would give it (amounts as LosslessNumber literals, or strings where the schema takes them). */
  body?: unknown;
}

/**
 * Runs `op` for a caller an adapter has already recognised — the console's session stands for the
 * payer's account key — with the operation's own checks of the input (its key rule, its query and
 * body schemas, so the same messages) and its own `run`; answers the outcome, for the adapter to
 * render its own way (a console page). A console form action is this call, never a use case
 * called by hand.
 */
export async function runFor<C extends Credentials, I extends Idempotency, B, Q, O>(
  op: Operation<C, I, B, Q, O>,
  caller: CallerOf<C>,
  input: CallInput,
  options: ExecuteOptions = {},
): Promise<O | StoredReply> {
  const headers = input.idempotencyKey === undefined ? {} : { 'idempotency-key': input.idempotencyKey };
  const idempotencyKey = keyOf(op.idempotency, { headers }) as OperationCall<C, I, B, Q>['idempotencyKey'];
  const query = (op.query ? validate(op.query, input.query ?? {}) : undefined) as Q;
  const body = (
    op.body?.plainJson?.checks === 'run' ? (input.body ?? {}) : op.body ? validate(op.body.schema, input.body ?? {}) : undefined
  ) as B;
  const baseUrl = op.links && options.baseUrl ? options.baseUrl() : '';
  return op.run({ caller, idempotencyKey, params: input.params ?? {}, query, body, baseUrl });
}

/**
 * The operator's credentials (`operator`, `agentOrOperatorKey`) are resolved by
 * operator-credentials.ts, which the operation modules that take them import: a function whose
 * operations never take the operator bundles none of it (the admin key's secret and its reader).
 */
type OperatorResolver = (
  credentials: Extract<Credentials, { kind: 'operator' | 'agentOrOperatorKey' }>,
  req: ApiRequest,
) => Promise<unknown>;
let operatorResolver: OperatorResolver | undefined;

/** Called once by operator-credentials.ts at its import. */
export function registerOperatorCredentials(resolver: OperatorResolver): void {
  operatorResolver = resolver;
}

function operatorCredentials(credentials: Extract<Credentials, { kind: 'operator' | 'agentOrOperatorKey' }>, req: ApiRequest) {
  if (!operatorResolver) throw new Error(`credentials ${credentials.kind}: the operation's module does not import operator-credentials.ts`);
  return operatorResolver(credentials, req);
}

async function callerOf(credentials: Credentials, req: ApiRequest): Promise<unknown> {
  switch (credentials.kind) {
    case 'public':
      return {};
    case 'agent':
      return authenticate(req, credentials.refusal, false);
    case 'agentForPayer':
      return authenticate(req, credentials.refusal, true);
    case 'payer':
      return authenticateUser(req);
    case 'operator':
    case 'agentOrOperatorKey':
      return operatorCredentials(credentials, req);
    case 'agentOrBearer': {
      const key = req.headers['x-agent-key'] ?? BEARER.exec(req.headers.authorization ?? '')?.[1];
      return authenticate({ ...req, headers: { ...req.headers, 'x-agent-key': key } }, credentials.refusal, false);
    }
    case 'agentOrPayer':
      // The agent's key when one is sent (or when neither is: `missing x-agent-key header`), else the payer's account key.
      return keySent(req.headers['x-agent-key']) || !keySent(req.headers['x-user-key'])
        ? authenticate(req, credentials.refusal, false)
        : authenticateUser(req);
    case 'anyAgentKey': {
      // Not looked up here: a disabled agent's key is one too, and `run` reads it fresh (never the auth cache).
      const agentKey = req.headers['x-agent-key'];
      if (!keySent(agentKey)) throw refuse(MISSING_KEY_HEADER.agentKey);
      if (!looksLikeKey(agentKey, AGENT_KEY_PREFIX)) throw refuse(credentials.refusal);
      return { agentKeyHash: hashKey(agentKey) };
    }
  }
}

function keyOf(rule: Idempotency, req: Pick<ApiRequest, 'headers'>): string | undefined {
  if (rule === 'required') return requireIdempotencyKey(req);
  if (rule === 'optional') return optionalIdempotencyKey(req);
  return undefined;
}

function bodyOf<B>(spec: BodySpec<B>, req: ApiRequest): B {
  // All fields optional: an absent or blank body is `{}`; anything else is read as JSON.
  if (spec.optional && (req.body === undefined || req.body.trim() === '')) return validate(spec.schema, {});
  if (!spec.plainJson) return parseJsonBody(req, spec.schema);
  const plain: unknown = JSON.parse(stringify(parseJsonBody(req, ANY_OBJECT)) ?? '{}');
  return spec.plainJson.checks === 'run' ? (plain as B) : validate(spec.schema, plain);
}
