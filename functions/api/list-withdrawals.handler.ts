import { listWithdrawalsOperation } from '../operations/withdrawal-list';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(listWithdrawalsOperation);
