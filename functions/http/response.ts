import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { LosslessNumber, stringify } from 'lossless-json';
import { type Currency, formatAmount, type Minor } from '../core/money';

/** What a use case returns: a status and a body (or an already-serialised body, for replays). */
export interface HttpResult {
  statusCode: number;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

/** A money amount as an exact JSON number literal (no float ever sits between). */
export function jsonAmount(minor: Minor, currency: Currency): LosslessNumber {
  return new LosslessNumber(formatAmount(minor, currency));
}

/** Serialises a body; LosslessNumber values are written as their exact text. */
export function serialize(body: unknown): string {
  return stringify(body) ?? 'null';
}

export function toResponse(result: HttpResult): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: result.statusCode,
    headers: { 'content-type': 'application/json', ...result.headers },
    body: result.rawBody ?? serialize(result.body ?? {}),
  };
}

export function errorResponse(statusCode: number, message: string, headers: Record<string, string> = {}) {
  return toResponse({ statusCode, body: { error: message }, headers });
}
