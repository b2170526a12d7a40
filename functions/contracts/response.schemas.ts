/**
 * The response bodies, as zod schemas: what docs/openapi.json says each answer looks like, and
 * what the e2e suites hold every answer to (test/support/contract.ts). Strict objects, so a field
 * a view adds without the document saying so fails the drift check.
 *
 * Each schema is registered under its component name (`#/components/schemas/<id>`). This file holds
 * the registry, the atoms every body is made of (timestamps, currencies, amounts, ids) and the
 * bodies of no one area (errors, balances, the service's own); each area's bodies are in
 * contracts/responses/ (charges, accounts, payouts, top-ups, webhooks, grants).
 */

import * as z from 'zod';
import { CURRENCIES } from '../core/money';

/** The component schemas of the document: request and response bodies, by name. */
export const COMPONENTS = z.registry<{ id: string }>();

/** Registers a schema as `#/components/schemas/<id>` and returns it. */
export function component<S extends z.ZodType>(id: string, schema: S): S {
  COMPONENTS.add(schema, { id });
  return schema;
}

export const timestamp = z.iso.datetime().meta({ description: 'ISO 8601, UTC, milliseconds.', examples: ['2026-01-15T09:30:00.000Z'] });
export const currency = z.enum(CURRENCIES).meta({ description: 'USD has 2 decimal places, USDC 6.' });
export const amount = (description: string) =>
  z.number().meta({
    description: `${description} A decimal JSON number in currency units, written exactly (1.5 is 1.50); never a rounded float.`,
    examples: [1.5],
  });
export const id = (prefix: string, what: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}[0-9a-z]{26}$`))
    .meta({ description: `${what} id: "${prefix}" + a lower-case ULID.`, examples: [`${prefix}01jhx3k6v1f8q2n7c9m4p5r6s7`] });

export const errorBody = component(
  'Error',
  z.strictObject({ error: z.string().meta({ description: 'The exact public message.' }) }).meta({
    description: 'Every error answer. The message is part of the contract (README "Endpoints").',
  }),
);

export const balancesBody = component(
  'Balances',
  z.strictObject({ USD: amount('USD balance.'), USDC: amount('USDC balance.') }).meta({ description: 'One balance per currency.' }),
);

export const webhookReceivedBody = component('WebhookReceived', z.strictObject({ received: z.literal(true) }));
export const healthBody = component('Health', z.strictObject({ status: z.literal('ok') }));

/** The OpenAPI document itself (served as it is committed; described loosely, not by itself). */
export const openApiDocumentBody = component(
  'OpenApiDocument',
  z.looseObject({ openapi: z.string(), info: z.looseObject({ version: z.string() }) }).meta({ description: 'This document.' }),
);

/** A JSON-RPC 2.0 message (MCP over streamable HTTP); its result is MCP's, described there. */
export const jsonRpcMessage = component(
  'JsonRpcMessage',
  z
    .looseObject({ jsonrpc: z.literal('2.0') })
    .meta({ description: 'A JSON-RPC 2.0 request, notification or response (https://modelcontextprotocol.io).' }),
);
/** One message, or a batch of at most 10 (functions/mcp/remote.ts MAX_MESSAGES_PER_REQUEST). */
export const jsonRpcMessages = component(
  'JsonRpcMessages',
  z.union([jsonRpcMessage, z.array(jsonRpcMessage).min(1).max(10)]).meta({
    description: 'One JSON-RPC message, or a batch (an array) of at most 10; a batch is answered with an array.',
  }),
);
