import { userStatementOperation } from '../operations/statement';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userStatementOperation);
