import { userGetGrantOperation } from '../operations/grants';
import { lambdaHandler } from './lambda';

export const handler = lambdaHandler(userGetGrantOperation);
