import { listWithdrawalsOperation } from '../operations/withdrawals';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(listWithdrawalsOperation);
