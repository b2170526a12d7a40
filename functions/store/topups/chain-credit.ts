/**
 * The cross-rail credit-once guard (core/chain-credits.ts): `CHAINCREDIT#<signature>`, one item
 * per on-chain transaction that credited money, written conditioned on not existing in every
 * transaction that credits money for an on-chain transaction (the USDC top-up's completion,
 * store/topups/topup-completion.repository.ts; the x402 credit, store/x402-facilitator/x402.repository.ts). The rail's
 * own guard still answers a replay on the same rail; this one refuses the other rail.
 */
import { config } from '../../config';
import { type ChainCredit, type ChainCreditRail, TransferCreditedElsewhereError } from '../../core/chain-credits';
import { keys } from '../table';
import { type NamedItem, named } from '../transact';

/** Above a rail's own items: the other rail's credit is the reason, whatever else failed with it. */
const PRECEDENCE = 10;

/**
 * The guard item of one crediting transaction. Its failed condition means: credited by the other
 * rail (TransferCreditedElsewhereError), or, when the same rail credited it, nothing more (the
 * rail's own guard says why: a replay).
 */
export function chainCreditGuard<T = never>(credit: ChainCredit, at: string): NamedItem<T> {
  return named<T>(
    {
      Put: {
        TableName: config().TABLE_NAME,
        Item: { ...keys.chainCredit(credit.signature), type: 'ChainCredit', ...credit, createdAt: at },
        ConditionExpression: 'attribute_not_exists(PK)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    {
      onConditionFailed: (old) => {
        const by = old?.rail === 'topup' || old?.rail === 'x402' ? (old.rail as ChainCreditRail) : 'unknown';
        return by === credit.rail ? undefined : new TransferCreditedElsewhereError(credit.signature, by);
      },
      precedence: PRECEDENCE,
    },
  );
}
