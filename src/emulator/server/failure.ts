/**
 * The failure the HTTP server and the WebSocket gateway answer for an error: its coded failure,
 * or for an unexpected exception (a bug) the retryable internal failure, counted and logged.
 */
import { describeError, type LogFields, type Logger } from '../../core/logger.ts';
import { type CodedFailure, codedFailureOf, internalFailure } from '../service/errors.ts';

export function answeredFailure(
  error: unknown,
  counters: { internalErrors: number },
  logger: Logger,
  message: string,
  fields: LogFields = {},
): CodedFailure {
  const failure = codedFailureOf(error);
  if (failure !== null) return failure;
  counters.internalErrors += 1;
  logger.error(message, { ...fields, error: describeError(error) });
  return internalFailure();
}
