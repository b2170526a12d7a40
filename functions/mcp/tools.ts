/**
 * The MCP tools' implementations, one entry each, keyed by the tool names of the operation registry
 * (functions/registry/mcp-tools.ts `MCP_TOOLS`, which names each tool's route and gives tools/list its
 * order): the arguments (built from the API's own zod request schemas), the MCP annotations, the
 * parts of the HTTP call the stdio server makes for it (the method and path are its route's), and
 * the route's operation (functions/operations/), through which the remote server executes that very
 * call in-process. Both paths run the route's own checks and so answer the same messages. The
 * arguments themselves are in tool-inputs.ts. A tool of the registry without an entry here, or an
 * entry of no tool, fails to compile.
 */
import * as z from 'zod';
import { agentBalanceBody } from '../contracts/responses/accounts';
import { chargeBody, chargeListBody } from '../contracts/responses/charges';
import { grantRequestBody } from '../contracts/responses/grants';
import { withdrawalBody } from '../contracts/responses/payouts';
import { createPurchaseSchema, purchaseSchema } from '../contracts/x402';
import { x402RefundCreatedSchema } from '../contracts/x402-refund';
import { GRANT_REQUEST_TTL_SECONDS } from '../core/grants';
import { createChargeOperation, getBalanceOperation, getChargeOperation, listChargesOperation } from '../operations/charges';
import { agentCreateGrantRequestOperation, agentGetGrantRequestOperation } from '../operations/grant-requests';
import { captureChargeOperation, refundChargeOperation, releaseChargeOperation } from '../operations/lifecycle';
import { listWithdrawalsOperation } from '../operations/withdrawal-list';
import { withdrawOperation } from '../operations/withdrawals';
import { createPurchaseOperation } from '../operations/x402-purchases';
import { refundX402PaymentOperation } from '../operations/x402-refunds';
import { MCP_TOOLS, type McpToolName } from '../registry/mcp-tools';
import { TAB_TOOLS } from './tab-tools';
import {
  amountBody,
  captureInput,
  createChargeInput,
  digits,
  grantRequestId,
  holdTerms,
  idempotencyKey,
  listChargesInput,
  listWithdrawalsInput,
  literal,
  refundInput,
  releaseInput,
  requestGrantInput,
  termsBody,
  withdrawInput,
  x402RefundInput,
} from './tool-inputs';
import { type ApiCall, type ToolImplementation, type ToolSpec, tool } from './tool-spec';

export type { ApiCall, ToolSpec };

const IMPLEMENTATIONS: { readonly [N in McpToolName]: ToolImplementation } = {
  create_charge: tool({
    title: "Charge a user's balance",
    description:
      "Charges the user whose key is given: debits their prepaid balance, credits this agent. Fails with 'insufficient balance' " +
      '(a FAILED charge is kept). Safe to retry with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: createChargeInput,
    output: chargeBody,
    http: ({ amount, currency, description, capture, holdSeconds, user_key, idempotency_key }) => ({
      headers: { 'x-user-key': user_key, 'idempotency-key': idempotency_key },
      body: {
        amount: literal(amount),
        currency,
        ...(description === undefined ? {} : { description }),
        ...holdTerms(capture, holdSeconds),
      },
    }),
    operation: createChargeOperation,
  }),
  get_charge: tool({
    title: 'Get a charge',
    description: 'One charge this agent created, by id.',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({ charge_id: z.string().max(64).meta({ description: 'The charge id (c…).' }) }),
    output: chargeBody,
    http: ({ charge_id }) => ({ params: { id: charge_id } }),
    operation: getChargeOperation,
  }),
  list_charges: tool({
    title: "List this agent's charges",
    description: "Newest first. Pass the answer's nextCursor as cursor to read the next page (null on the last).",
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: listChargesInput,
    output: chargeListBody,
    http: ({ page, limit, cursor }) => ({
      query: { page: digits(page), limit: digits(limit), cursor },
    }),
    operation: listChargesOperation,
  }),
  get_balance: tool({
    title: "This agent's earned balance",
    description: 'What this agent has earned and may withdraw, per currency (USD, USDC).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({}),
    output: agentBalanceBody,
    http: () => ({}),
    operation: getBalanceOperation,
  }),
  // --- The charge lifecycle (docs/lifecycle.md) ---
  capture_charge: tool({
    title: 'Capture a hold',
    description:
      'Takes all or part of a hold made with create_charge capture=false, once the price is known: the charge becomes SUCCESS ' +
      'with amount = what was captured; the rest goes back to the user. Fails while the user has not approved it yet. Safe to ' +
      'retry with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: captureInput,
    output: chargeBody,
    http: ({ charge_id, amount, idempotency_key }) => ({
      params: { id: charge_id },
      headers: { 'idempotency-key': idempotency_key },
      body: amountBody(amount),
    }),
    operation: captureChargeOperation,
  }),
  release_charge: tool({
    title: 'Release a hold',
    description:
      'Gives a PENDING charge back to the user without taking anything: it becomes FAILED "released by agent". Safe to retry ' +
      'with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: releaseInput,
    output: chargeBody,
    http: ({ charge_id, idempotency_key }) => ({
      params: { id: charge_id },
      headers: { 'idempotency-key': idempotency_key },
      body: {},
    }),
    operation: releaseChargeOperation,
  }),
  refund_charge: tool({
    title: 'Refund a charge',
    description:
      "Gives all or part of a SUCCESS charge back to the user, from this agent's earned balance (refunds add up in " +
      "refundedAmount and never pass the charge). Fails with 'insufficient balance' when the earnings were withdrawn. Safe to " +
      'retry with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: refundInput,
    output: chargeBody,
    http: ({ charge_id, amount, idempotency_key }) => ({
      params: { id: charge_id },
      headers: { 'idempotency-key': idempotency_key },
      body: amountBody(amount),
    }),
    operation: refundChargeOperation,
  }),
  // --- end of the charge lifecycle ---
  withdraw: tool({
    title: 'Withdraw earnings',
    description:
      'Pays out earnings minus a 3% platform fee: USDC to a Solana wallet address, USD to a PayPal e-mail or payer id. ' +
      'createTokenAccount: see its description. The payout starts PENDING; follow it with list_withdrawals and payout_id. ' +
      'One payout per currency in flight. Safe to retry with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    input: withdrawInput,
    output: withdrawalBody,
    http: ({ amount, currency, walletAddress, createTokenAccount, idempotency_key }) => ({
      headers: { 'idempotency-key': idempotency_key },
      body: { amount: literal(amount), currency, walletAddress, ...(createTokenAccount === undefined ? {} : { createTokenAccount }) },
    }),
    operation: withdrawOperation,
  }),
  list_withdrawals: tool({
    title: "List this agent's payouts, or get one",
    description:
      'Payouts newest first (pass nextCursor as cursor for the next page), or with payout_id that one payout and its status ' +
      '(PENDING, PROCESSING, COMPLETED, FAILED and refunded).',
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: listWithdrawalsInput,
    http: ({ limit, cursor, payout_id }) => ({
      query: { limit: digits(limit), cursor, payoutId: payout_id },
    }),
    operation: listWithdrawalsOperation,
  }),
  // --- Grant requests (docs/grants.md) ---
  request_grant: tool({
    title: 'Ask a payer for a grant',
    description:
      "Asks for a grant: a ug_live_ key that charges one payer's balance, in one currency, within the limits asked for. " +
      `Answers a pending request with a consentUrl: give that link to the payer (only to them), who allows or denies on the ` +
      `service's own page; the request lives ${GRANT_REQUEST_TTL_SECONDS / 60} minutes. Then poll get_grant_request. ` +
      'Moves no money. Safe to retry with the same idempotency_key (the same request and link).',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: requestGrantInput,
    output: grantRequestBody,
    http: (args) => ({
      headers: { 'idempotency-key': args.idempotency_key },
      body: termsBody(args),
    }),
    operation: agentCreateGrantRequestOperation,
  }),
  get_grant_request: tool({
    title: 'Poll a grant request',
    description:
      'A grant request made with request_grant: pending, approved, claimed, denied or expired. The first call after the payer ' +
      'allowed it returns grant.key (ug_live_…) and makes the request claimed: that is the only time the key is ever shown, so ' +
      'keep it (send it as user_key to create_charge). Later calls show the grant without its key.',
    // Not read-only: the first read after approval claims the key. Idempotent: no later call changes anything more.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    input: z.strictObject({ request_id: grantRequestId }),
    output: grantRequestBody,
    http: ({ request_id }) => ({ params: { id: request_id } }),
    operation: agentGetGrantRequestOperation,
  }),
  // --- end of grant requests ---
  x402_purchase: tool({
    title: 'Pay an x402 seller',
    description:
      "Pays an x402 seller from the payer's USDC under this agent's grant (DESIGN §22): give one entry of the seller's " +
      'PAYMENT-REQUIRED accepts as payment_requirements. The amount is held as a charge with capture false would hold it; the ' +
      "answer's paymentPayload is what to send the seller in PAYMENT-SIGNATURE (null when the payer must approve first: " +
      'then GET the purchase). Captured once the transfer is on chain; the hold comes back if the seller never settles it.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    input: z.strictObject({
      payment_requirements: createPurchaseSchema.shape.paymentRequirements,
      resource: createPurchaseSchema.shape.resource,
      user_key: createChargeInput.shape.user_key,
      idempotency_key: idempotencyKey,
    }),
    output: purchaseSchema,
    http: ({ payment_requirements, resource, user_key, idempotency_key }) => ({
      headers: { 'x-user-key': user_key, 'idempotency-key': idempotency_key },
      body: { x402Version: 2, paymentRequirements: payment_requirements, ...(resource === undefined ? {} : { resource }) },
    }),
    // The hot wallet's signer is loaded only when a purchase is made (the operation imports it lazily: it carries @solana/kit).
    operation: createPurchaseOperation,
  }),
  x402_refund: tool({
    title: 'Refund an x402 payment',
    description:
      "Gives all or part of an x402 payment this agent was paid back to the payer's wallet, from this agent's " +
      'USDC balance, with no fee: debited at once, sent on chain by the payout worker. Refunds add up to at most the payment. ' +
      "Fails with 'insufficient balance' when the earnings were withdrawn. Safe to retry with the same idempotency_key.",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    input: x402RefundInput,
    output: x402RefundCreatedSchema,
    http: ({ payment_id, amount, idempotency_key }) => ({
      params: { id: payment_id },
      headers: { 'idempotency-key': idempotency_key },
      body: amountBody(amount),
    }),
    operation: refundX402PaymentOperation,
  }),
  ...TAB_TOOLS,
};

/** The tools in tools/list order, each with the route the registry names for it. */
export const TOOLS: readonly ToolSpec[] = MCP_TOOLS.map(({ name, route }) => {
  const implementation = IMPLEMENTATIONS[name];
  // The registry names each tool's route (its grants come from there): the operation must be that route's.
  if (implementation.operation.route !== route) {
    throw new Error(`MCP tool ${name}: its operation is ${implementation.operation.route}'s, the registry names ${route}`);
  }
  return { name, route, ...implementation };
});

/** A query as the HTTP layer sees it: absent parameters are absent, not undefined. */
export function definedOnly(query: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
}
