import { userListTopupsOperation } from '../operations/topups';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userListTopupsOperation);
