/**
 * What a use case answers, as data, and the one renderer that turns it into what an adapter sends.
 * A refusal is a catalogue entry (functions/messages/catalogue.ts) and what its text is made of;
 * its status, text and headers are read here, for the HTTP answer, the MCP tool error and the CLI
 * alike.
 */
import { REFUSALS, type RefusalEntry } from '../messages/catalogue';
import type { Refusal } from '../messages/refusal';

/** A refusal as every adapter shows it: the catalogue's status, the exact text, and its headers. */
export interface RenderedRefusal {
  status: number;
  text: string;
  headers: Record<string, string>;
}

export function renderRefusal(refusal: Refusal): RenderedRefusal {
  const entry: RefusalEntry = REFUSALS[refusal.code];
  const retryAfter = refusal.retryAfter ?? entry.retryAfter;
  return {
    status: refusal.statusCode,
    text: refusal.message,
    headers: {
      ...entry.headers,
      // Whole seconds, at least one: a client that waits 0 would only be refused again.
      ...(retryAfter === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfter))) }),
    },
  };
}
