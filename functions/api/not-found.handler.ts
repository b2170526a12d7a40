import { httpHandler } from '../http/handler';
import { refuse } from '../messages/refusal';

/** API Gateway's $default route: any path or method no route matches. */
export const handler = httpHandler(async () => {
  throw refuse('notFound');
});
