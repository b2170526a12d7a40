import { NotFoundError } from '../core/errors';
import { httpHandler } from '../http/handler';

/** API Gateway's $default route: any path or method no route matches. */
export const handler = httpHandler(async () => {
  throw new NotFoundError('not found');
});
