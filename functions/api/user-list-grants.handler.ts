import { loadConfig } from '../config';
import { decodeCursor, encodeCursor, isCount, pageLimit } from '../contracts/cursor';
import { grantView, listGrantsQuerySchema } from '../contracts/grants';
import { validate } from '../contracts/validation';
import { httpHandler } from '../http/handler';
import * as NEEDS from '../registry/needs.generated';
import { authenticateUser } from '../use-cases/auth';
import { listMyGrants } from '../use-cases/grants';

// Refuses to start (fails the init) without what this route needs beyond the shared configuration: its registry entry's.
loadConfig({ require: NEEDS.userListGrants });

/** A grants cursor: the last grant id returned and the page size. */
const readCursor = (text: string) =>
  decodeCursor(text, ([after, limit, ...rest]) =>
    rest.length === 0 && typeof after === 'string' && isCount(limit) ? { after, limit } : undefined,
  );

/** GET /api/v1/users/me/grants?limit=&cursor=&status= — the account key; newest first. */
export const handler = httpHandler(async (req) => {
  const { userId } = await authenticateUser(req);
  const query = validate(listGrantsQuerySchema, req.query);
  const cursor = query.cursor ? readCursor(query.cursor) : undefined;
  const limit = pageLimit(query.limit, cursor?.limit);
  const page = await listMyGrants(userId, {
    limit,
    ...(cursor ? { after: cursor.after } : {}),
    ...(query.status ? { status: query.status } : {}),
  });
  const now = new Date();
  return {
    statusCode: 200,
    body: { data: page.grants.map((g) => grantView(g, now)), nextCursor: page.lastId ? encodeCursor([page.lastId, limit]) : null },
  };
});
