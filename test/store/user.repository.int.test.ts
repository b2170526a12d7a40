import { StaleReadError } from '../../functions/core/errors';
import { newUserId } from '../../functions/core/ids';
import { createUser, creditUser, getUser } from '../../functions/store/identity/user.repository';
import { ConditionFailedError } from '../../functions/store/transact';
import { createTestTable } from '../support/table';

beforeAll(createTestTable);

const idem = (key: string) => ({ scope: 'admin#credits', key, record: { fingerprint: 'f', statusCode: 200, body: '{}' } });

describe('user repository against DynamoDB Local', () => {
  it('creates a user with zero balances and refuses the same id twice', async () => {
    const id = newUserId();
    await createUser(id, `h-${id}`, new Date());
    expect((await getUser(id))?.balances).toEqual({ USD: 0, USDC: 0 });
    await expect(createUser(id, `h2-${id}`, new Date())).rejects.toBeInstanceOf(ConditionFailedError);
  });

  it('credits only while the balances are the ones read (optimistic check)', async () => {
    const id = newUserId();
    await createUser(id, `h-${id}`, new Date());
    await creditUser(id, { USD: 0, USDC: 0 }, 500, 'USD', idem(`a-${id}`), new Date());
    const stale = creditUser(id, { USD: 0, USDC: 0 }, 500, 'USD', idem(`b-${id}`), new Date());
    await expect(stale).rejects.toBeInstanceOf(StaleReadError);
    expect((await getUser(id))?.balances).toEqual({ USD: 500, USDC: 0 });
  });

  it('refuses to credit a user that does not exist', async () => {
    await expect(creditUser(newUserId(), { USD: 0, USDC: 0 }, 1, 'USD', idem(`c-${Date.now()}`), new Date())).rejects.toBeInstanceOf(
      StaleReadError,
    );
  });
});
