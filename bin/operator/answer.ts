/**
 * How `npm run admin` prints an answer, whichever way it was obtained (a use case in-process, or
 * the admin API over HTTP): the JSON indented for a terminal, parsed and written with lossless-json
 * so amounts keep their exact text, and a refusal's message as the failure.
 */
import { parse, stringify } from 'lossless-json';

/** Where the CLI writes: stdout gets the JSON answer, stderr everything meant for the operator. */
export interface AdminIo {
  out(text: string): void;
  err(text: string): void;
}

/** What a command answered (JSON for stdout), and why it counts as a failure when it does. */
export interface Answer {
  json: string;
  failure?: string;
}

/** An HTTP answer as status and body text: the API's, or a use case's serialized. */
export function answer(statusCode: number, text: string): Answer {
  let json: string;
  try {
    json = stringify(parse(text), undefined, 2) ?? 'null';
  } catch {
    // Not JSON: not the service speaking (a proxy, a load balancer); show it as the failure.
    return { json: '', failure: `HTTP ${statusCode}: ${text.trim().slice(0, 200) || '(empty body)'}` };
  }
  if (statusCode < 400) return { json };
  const { error, message } = JSON.parse(json) as { error?: unknown; message?: unknown };
  if (typeof error === 'string') return { json, failure: error };
  // API Gateway's own refusals say `{"message": …}`: 403 for a missing, wrong or unauthorized signature.
  if (typeof message === 'string') return { json, failure: `HTTP ${statusCode}: ${message}${statusCode === 403 ? FORBIDDEN_HINT : ''}` };
  return { json, failure: `status ${statusCode}` };
}

const FORBIDDEN_HINT =
  ' (API Gateway refused the request before the service saw it: the admin routes want a SigV4 signature from ' +
  'credentials allowed execute-api:Invoke on them, the AdminApiPolicyArn output; docs/deploy.md "Admin access")';
