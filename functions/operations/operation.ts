/**
 * An operation: one route of the API as one object (DESIGN §25, docs/registry.md). It names what
 * the route accepts and does; `execute.ts` runs it, the same sequence for every route, and the
 * adapters derive from it: the Lambda handler (functions/api/lambda.ts), the MCP tool
 * (functions/mcp/tools.ts), the console's form actions. Nothing else authenticates, reads an
 * Idempotency-Key or parses a body for an API route.
 *
 * The route's registry entry (functions/registry/) documents the same schemas (a test holds the
 * two to be the same objects) and stays free of use cases: the stack reads it, and the route table
 * would weigh on every bundle if an operation were in it.
 */
import type * as z from 'zod';
import type { RequiredConfig } from '../config';
import type { ApiResult, StoredReply } from '../contracts/api';
import type { Agent } from '../core/agents';
import type { AuthRefusal } from '../messages/credentials';
import type { RouteName } from '../registry/routes';
import type { ChargeParties } from '../use-cases/auth';

/**
 * Who may call it, checked in this order before anything else is read:
 * - `public`: anyone (the registry entry is `public: true`);
 * - `agent`: an enabled agent's x-agent-key, refused with `refusal`;
 * - `agentForPayer`: that and a payer's x-user-key (an account key or a grant key);
 * - `payer`: a payer's account key (x-user-key);
 * - `operator`: the operator (IAM, or x-admin-key where the stage takes a key);
 * - `agentOrOperatorKey`: an agent's key, or x-admin-key where the stage takes a key (reads any);
 * - `anyAgentKey`: an agent's key by its form only, enabled or not (key rotation: `run` looks the key up).
 * - `agentOrBearer`: an enabled agent's key as x-agent-key or `Authorization: Bearer ag_live_…`
 *   (what a stock x402 middleware's `createAuthHeaders` sends), refused with `refusal`.
 * - `agentOrPayer`: either party of a movement (a receipt): an enabled agent's x-agent-key (refused
 *   with `refusal`), or without one a payer's account key (x-user-key).
 */
export type Credentials =
  | { kind: 'public' }
  | { kind: 'agent'; refusal: AuthRefusal }
  | { kind: 'agentForPayer'; refusal: AuthRefusal }
  | { kind: 'payer' }
  | { kind: 'operator' }
  | { kind: 'agentOrOperatorKey'; refusal: AuthRefusal }
  | { kind: 'anyAgentKey'; refusal: AuthRefusal }
  | { kind: 'agentOrBearer'; refusal: AuthRefusal }
  | { kind: 'agentOrPayer'; refusal: AuthRefusal };

/** What `run` gets of the caller, by the credentials the operation accepts. */
export type CallerOf<C extends Credentials> = C extends { kind: 'agent' | 'agentOrBearer' }
  ? { agent: Agent }
  : C extends { kind: 'agentForPayer' }
    ? ChargeParties
    : C extends { kind: 'payer' }
      ? { userId: string; userKeyHash: string }
      : C extends { kind: 'agentOrOperatorKey' }
        ? { agent: Agent } | { operator: true }
        : C extends { kind: 'anyAgentKey' }
          ? { agentKeyHash: string }
          : C extends { kind: 'agentOrPayer' }
            ? { agent: Agent } | { userId: string; userKeyHash: string }
            : Record<string, never>;

/** The Idempotency-Key header: `required` (money movements), `optional` (creations), or not read. */
export type Idempotency = 'required' | 'optional' | 'none';

type KeyOf<I extends Idempotency> = I extends 'required' ? string : I extends 'optional' ? string | undefined : undefined;

/** The JSON body: its schema, and whether an absent or blank body reads as `{}` (all fields optional). */
export interface BodySpec<B> {
  schema: z.ZodType<B>;
  optional?: true;
  /**
   * The x402 wire format, which carries no money in JSON numbers (amounts are strings of atomic
   * units): the body is read as plain JSON, `checks` says who checks it against the schema:
   * `schema` (execute, as any body), or `run` (the route judges it field by field, in its own order
   * and words, the schema documenting what it accepts; run then gets any JSON object).
   */
  plainJson?: { checks: 'schema' | 'run' };
}

/** What `run` is called with: the caller and the request's parts, each already checked. */
export interface OperationCall<C extends Credentials, I extends Idempotency, B, Q> {
  caller: CallerOf<C>;
  idempotencyKey: KeyOf<I>;
  /** The path's `{params}`, as given (a use case checks an id's shape and answers 404). */
  params: Readonly<Record<string, string | undefined>>;
  body: B;
  query: Q;
  /** The API's public address without a trailing slash, for links an answer hands out (`links: true` only; '' otherwise). */
  baseUrl: string;
}

/** What `render` gets beside the outcome. */
export interface RenderContext {
  /** The API's public address without a trailing slash (`links: true` only; '' otherwise), as `run` got it. */
  baseUrl: string;
}

export interface Operation<
  C extends Credentials = Credentials,
  I extends Idempotency = Idempotency,
  B = unknown,
  Q = unknown,
  O = unknown,
> {
  /** The registry entry it is the operation of (method, path, grants, documentation). */
  route: RouteName;
  /** What its function needs beyond the shared configuration (functions/registry/needs.generated.ts). */
  needs: RequiredConfig;
  credentials: C;
  idempotency: I;
  /** The JSON body's schema: the one the registry entry documents. Absent: the body is not read. */
  body?: BodySpec<B>;
  /** The query string's strict schema: the one the registry entry documents. Absent: not read. */
  query?: z.ZodType<Q>;
  /** Hands out links to the API (approval links, receipt links): `run` and `render` get the public base URL. */
  links?: true;
  /** The route's one use case, called with checked parts; its outcome, or an earlier answer under the same key. */
  run(call: OperationCall<C, I, B, Q>): Promise<O | StoredReply>;
  /**
   * The outcome as the route's answer (a stored replay is sent as it was, never rendered again);
   * `baseUrl` as `run` got it, for the links the answer hands out (receipt links, DESIGN §27).
   */
  render(outcome: O, context: RenderContext): ApiResult;
}

/** An operation, its types inferred from the object (the credentials, key rule and schemas type `run`'s call). */
// Pure (esbuild's annotation): an operation a function does not use is dropped from its bundle, with
// everything only it imports. Without it every `operation({...})` of a module is kept as a call that
// might have effects, and a handler bundles its whole module's use cases (the admin functions grew
// to 587 KB).
/* @__NO_SIDE_EFFECTS__ */
export function operation<C extends Credentials, I extends Idempotency, B = undefined, Q = undefined, O = unknown>(
  spec: Operation<C, I, B, Q, O>,
): Operation<C, I, B, Q, O> {
  return spec;
}

/** For the operations whose answer is the outcome as it is (a status and a JSON body). */
export const asAnswered = (result: ApiResult): ApiResult => result;
