import { db } from '../../functions/store/client';

describe('the DynamoDB client', () => {
  it("runs no SDK log middleware: its no-op logger still filtered every request's input and output", () => {
    const names = db().middlewareStack.identify();
    expect(names.some((n) => n.startsWith('countRequests'))).toBe(true);
    expect(names.some((n) => n.startsWith('loggerMiddleware'))).toBe(false);
  });
});
