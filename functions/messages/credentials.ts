/**
 * Which refusal each endpoint answers a credential it does not take with. Here, below every layer,
 * so the use cases that refuse and the operation registry that documents the refusal
 * (functions/registry) read the same table.
 */
import type { RefusalCode } from './catalogue';

/**
 * The refusal (a catalogue code, functions/messages/catalogue.ts) each endpoint answers a credential
 * it does not take with, exactly as the contract gives them (docs/spec.md, docs/design.md).
 */
export const AUTH_MESSAGES = {
  createCharge: 'invalidOrDisabledAgentKey',
  listCharges: 'invalidOrDisabledAgentKey',
  getCharge: 'invalidAgentKey',
  withdraw: 'invalidAgent',
  listWithdrawals: 'invalidAgent',
  balance: 'invalidOrDisabledAgentKey',
  /** Capture, release, refund: money movements, as creating a charge. */
  lifecycle: 'invalidOrDisabledAgentKey',
  /** Key rotation: a disabled agent may rotate too, so only an unknown key is refused. */
  rotateKey: 'invalidAgentKey',
  user: 'invalidUserKey',
  admin: 'invalidAdminKey',
  /** Webhook routes: a disabled agent makes the service send nothing (registration is public). */
  webhooks: 'invalidOrDisabledAgentKey',
  /** Grant requests (docs/grants.md): a disabled agent asks for nothing. */
  grantRequests: 'invalidOrDisabledAgentKey',
  /** The x402 facilitator's routes (functions/operations/execute.ts `agentOrBearer`): a seller's key by x-agent-key or Bearer. */
  x402: 'invalidOrDisabledAgentKey',
  /** Refunds of x402 payments (DESIGN §28): a disabled agent may still give money back, so only an unknown key is refused. */
  x402Refund: 'invalidAgentKey',
  /** Receipts (docs/receipts.md): either party; a disabled agent's key is refused as on its other reads of money. */
  receipts: 'invalidOrDisabledAgentKey',
  /** A grant key sent by an agent it was not issued to (DESIGN §16). */
  grantForAnotherAgent: 'grantForAnotherAgent',
} as const satisfies Record<string, RefusalCode>;

/** A refusal of a credential: one of AUTH_MESSAGES's codes. */
export type AuthRefusal = (typeof AUTH_MESSAGES)[keyof typeof AUTH_MESSAGES];

/**
 * The refusal of a request whose key header is absent (or empty, or sent under another name), by
 * the credential (the OpenAPI security scheme) that header carries: the answer names the header to
 * send. use-cases/auth.ts refuses with these; the OpenAPI document (functions/api/openapi/document.ts)
 * gives each operation's 401 the ones of its first credential set, the headers a request without
 * any key is asked for.
 */
export const MISSING_KEY_HEADER = {
  agentKey: 'missingAgentKeyHeader',
  userKey: 'missingUserKeyHeader',
  adminKey: 'missingAdminKeyHeader',
} as const satisfies Record<string, RefusalCode>;
