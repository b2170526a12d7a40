/**
 * The public error family. Each carries its HTTP status and the exact public message; one
 * middleware (functions/http/error-mapper.ts) turns them into `{"error": message}`. Any other
 * thrown value becomes a 500 with a generic message, its cause logged, never echoed.
 */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class ValidationError extends ApiError {
  constructor(message: string) {
    super(400, message);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message: string) {
    super(401, message);
  }
}

export class PaymentRequiredError extends ApiError {
  constructor(message = 'insufficient balance') {
    super(402, message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'not found') {
    super(404, message);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, retryAfterSeconds?: number) {
    super(409, message, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) });
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message = 'request body too large') {
    super(413, message);
  }
}

export class IdempotencyMismatchError extends ApiError {
  constructor() {
    super(422, 'idempotency key reused with different request');
  }
}

export class IdempotencyInProgressError extends ConflictError {
  constructor() {
    super('request with this Idempotency-Key is in progress', 1);
  }
}

/** DynamoDB kept refusing (throttling or conflicts past every retry): the client may retry. */
export class ServiceBusyError extends ApiError {
  constructor(cause?: unknown) {
    super(503, 'service busy, retry later', { 'retry-after': '1' }, { cause });
  }
}

/** Domain signal from a repository: a conditional debit found too little money. */
export class InsufficientFundsError extends Error {
  constructor() {
    super('insufficient funds');
    this.name = 'InsufficientFundsError';
  }
}
