/**
 * The API's request and answer as use cases see them: the parts of a request a use case may read,
 * and the answer it gives (a status and a JSON body, or the exact text of a stored answer that an
 * idempotent replay sends again). The HTTP adapter (functions/http) builds the first from an API
 * Gateway event and writes the second as one; MCP's remote server runs use cases with them too.
 */

/** The parts of an API Gateway HTTP API (v2) event a use case may see. */
export interface ApiRequest {
  method: string;
  path: string;
  /** Lower-cased header names (API Gateway v2 already lower-cases them). */
  headers: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string | undefined>>;
  params: Readonly<Record<string, string | undefined>>;
  body: string | undefined;
  requestId: string;
  /**
   * The IAM principal (its ARN) API Gateway authorized, on a route with IAM authorization: it
   * checked the SigV4 signature and execute-api:Invoke before invoking the function. Absent on
   * every other route, and always locally: only API Gateway sets `requestContext.authorizer.iam`.
   */
  iamCaller?: string;
  /** The client's address as API Gateway saw it (sourceIp): what the console's sign-in and sign-up limits count by. */
  sourceIp?: string;
}

/** What a use case answers: a status and a body (or an already-serialised body, for replays). */
export interface ApiResult {
  statusCode: number;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * `application/json`, with any parameters (`; charset=utf-8`), in any case. An absent header is
 * accepted: a client that sends no type has not declared anything else.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  const mediaType = header.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

/**
 * An answer stored under an Idempotency-Key, sent again byte for byte with `Idempotent-Replayed:
 * true`: what a use case returns instead of its outcome when the request was already answered.
 * Opaque to the use case (it never reads the stored text); the edge that renders outcomes sends it
 * as it is (functions/operations/).
 */
export class StoredReply {
  constructor(
    readonly statusCode: number,
    readonly rawBody: string,
  ) {}

  /** The answer as sent: the stored text, marked as a replay. */
  toResult(): ApiResult {
    return { statusCode: this.statusCode, rawBody: this.rawBody, headers: { 'idempotent-replayed': 'true' } };
  }
}

/**
 * An outcome as it is answered and stored under an Idempotency-Key: its status and JSON body, and
 * what the record keeps instead of the body when the body holds a secret the command's `restore`
 * can rebuild (an approval link's token).
 */
export interface Rendered {
  statusCode: number;
  body: unknown;
  stored?: unknown;
}

/** A rendered outcome as the answer sent (the body as it is sent, never the stored variant). */
export const answerOf = ({ statusCode, body }: Rendered): ApiResult => ({ statusCode, body });
