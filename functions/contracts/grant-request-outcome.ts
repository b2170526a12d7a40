/**
 * A grant request made (POST /api/v1/agents/grant-requests) and its one rendering: the answer sent,
 * and the one stored under its Idempotency-Key, which keeps the consent link without its token (a
 * replay derives the token again: use-cases/identity/grant-requests.ts `restore`). Here because both the use
 * case (which stores it) and the operation (which sends it) read it.
 */
import type { GrantRequest } from '../core/grants';
import type { Rendered } from './api';
import { grantRequestView } from './grants';

export interface GrantRequestCreated {
  request: GrantRequest;
  /** The consent link handed to the agent, and the same link with a placeholder for its token (what the record keeps). */
  consentUrl: string;
  storedConsentUrl: string;
  now: Date;
}

export const renderGrantRequestCreated = ({ request, consentUrl, storedConsentUrl, now }: GrantRequestCreated): Rendered => ({
  statusCode: 201,
  body: grantRequestView(request, { consentUrl, now }),
  stored: grantRequestView(request, { consentUrl: storedConsentUrl, now }),
});
