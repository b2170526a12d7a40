/**
 * The tab tools (DESIGN §29, docs/tabs.md): open, use and close a tab, each its route's operation.
 * Spread into functions/mcp/tools.ts's entries, whose rules they follow.
 */
import { tabBody, tabUsageBody } from '../contracts/responses/tabs';
import { closeTabOperation, openTabOperation, useTabOperation } from '../operations/tabs';
import { closeTabInput, literal, openTabInput, useTabInput } from './tool-inputs';
import { type ToolImplementation, tool } from './tool-spec';

export const TAB_TOOLS: {
  readonly tab_open: ToolImplementation;
  readonly tab_use: ToolImplementation;
  readonly tab_close: ToolImplementation;
} = {
  tab_open: tool({
    title: 'Open a tab',
    description:
      "Holds `limit` of the payer's balance once, for many small uses (per call, per token): each tab_use then costs one small " +
      'write; tab_close captures what was used and gives the rest back. Starts PENDING_APPROVAL when the payer must approve ' +
      'first. Safe to retry with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: openTabInput,
    output: tabBody,
    http: ({ currency, limit, description, ttlSeconds, user_key, idempotency_key }) => ({
      headers: { 'x-user-key': user_key, 'idempotency-key': idempotency_key },
      body: {
        currency,
        limit: literal(limit),
        ...(description === undefined ? {} : { description }),
        ...(ttlSeconds === undefined ? {} : { ttlSeconds: literal(ttlSeconds) }),
      },
    }),
    operation: openTabOperation,
  }),
  tab_use: tool({
    title: 'Use a tab',
    description:
      "Adds `amount` to what an OPEN tab used; refused with 'tab limit exceeded' past its limit, 'tab is not open' once closed " +
      'or expired. Safe to retry with the same idempotency_key.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: useTabInput,
    output: tabUsageBody,
    http: ({ tab_id, amount, description, idempotency_key }) => ({
      params: { id: tab_id },
      headers: { 'idempotency-key': idempotency_key },
      body: { amount: literal(amount), ...(description === undefined ? {} : { description }) },
    }),
    operation: useTabOperation,
  }),
  tab_close: tool({
    title: 'Close a tab',
    description:
      'Captures what the tab used as one charge and gives the rest of the hold back to the payer. Closing a closed tab changes nothing.',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: closeTabInput,
    output: tabBody,
    http: ({ tab_id }) => ({ params: { id: tab_id }, body: {} }),
    operation: closeTabOperation,
  }),
};
