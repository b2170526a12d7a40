/**
 * core/purchases.ts `judgeSearch` and `nextSearchBackoff` as plain functions: what a search of the
 * chain makes of a signed purchase (the reconciler's and the operator's alike), and how long one it
 * could not reach waits before it is searched for again (DESIGN §24: 1 min, doubling to 1 h).
 */
import { judgeSearch, nextSearchBackoff, SEARCH_BACKOFF_FIRST_SECONDS, SEARCH_BACKOFF_MAX_SECONDS } from '../../functions/core/purchases';

const past = { finalizedHeight: 201, lastValidBlockHeight: 200 };
const live = { finalizedHeight: 200, lastValidBlockHeight: 200 };

describe("a search's verdict on a signed purchase", () => {
  it.each([
    ['landed without error, whatever the height and coverage', { ...live, landed: { err: null }, covered: false }, 'capture'],
    [
      'landed and failed: its message can never land again',
      { ...live, landed: { err: { InstructionError: [2, 'x'] } }, covered: false },
      'release',
    ],
    ['not found while its blockhash may still land, even covered', { ...live, landed: undefined, covered: true }, 'in-flight'],
    ['not found past its blockhash, every slot it could be in read', { ...past, landed: undefined, covered: true }, 'release'],
    ['not found past its blockhash, the search short of where it could be', { ...past, landed: undefined, covered: false }, 'unsearched'],
  ] as const)('%s', (_, search, verdict) => {
    expect(judgeSearch(search)).toBe(verdict);
  });
});

describe('the wait of a purchase its search could not reach', () => {
  it('is a minute the first time, then twice the last, at most an hour', () => {
    const waits: number[] = [];
    let last: number | undefined;
    for (let i = 0; i < 9; i++) {
      last = nextSearchBackoff(last);
      waits.push(last);
    }
    expect(waits).toEqual([60, 120, 240, 480, 960, 1_920, 3_600, 3_600, 3_600]);
    expect(SEARCH_BACKOFF_FIRST_SECONDS).toBe(60);
    expect(SEARCH_BACKOFF_MAX_SECONDS).toBe(3_600);
  });

  it('starts again at a minute from a stored wait that is no wait', () => {
    expect(nextSearchBackoff(0)).toBe(60);
    expect(nextSearchBackoff(Number.NaN)).toBe(60);
  });
});
