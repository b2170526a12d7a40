import { loadConfig } from '../config';
import { httpHandler } from '../http/handler';
import { refuse } from '../messages/refusal';
import * as NEEDS from '../registry/needs.generated';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.notFound });

/** API Gateway's $default route: any path or method no route matches. */
export const handler = httpHandler(async () => {
  throw refuse('notFound');
});
