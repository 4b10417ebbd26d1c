/**
 * A small client of the admin API, for `paperbot keys create` and `keys revoke` (and anyone
 * scripting a running emulator). Refusals become PaperbotError with the envelope's code.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { boundedReadFailure, deadlineOf, readAtMost } from '../../core/bounded-read.ts';
import { systemClock } from '../../core/clock.ts';
import { PaperbotError } from '../../core/errors.ts';
import { ErrorEnvelope } from '../../protocol/index.ts';
import {
  ADMIN_PREFIX,
  ADMIN_TOKEN_FILE,
  type CreatedKey,
  type CreateKeyRequestInput,
  type FaultRequest,
} from './admin.ts';

export interface AdminClientOptions {
  /** The emulator's base URL, `http://127.0.0.1:8787`. */
  readonly baseUrl: string;
  readonly token: string;
  /** Per request, for the whole exchange (default 10 s). */
  readonly timeoutMs?: number;
}

/** Admin answers are a few hundred bytes; anything past this is not the emulator. */
export const ADMIN_MAX_RESPONSE_BYTES = 1024 * 1024;

/** The admin token an emulator keeps in its data dir. */
export async function readAdminToken(dataDir: string): Promise<string> {
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new PaperbotError(
      'ADMIN_TOKEN_UNAVAILABLE',
      `cannot read the admin token at ${path}; start the emulator with --data ${dataDir} first`,
      { cause: error, details: { path } },
    );
  }
  const token = text.trim();
  if (token.length === 0) {
    throw new PaperbotError('ADMIN_TOKEN_UNAVAILABLE', `the admin token file ${path} is empty`, {
      details: { path },
    });
  }
  return token;
}

export class AdminClient {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number;

  constructor(options: AdminClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  createKey(body: CreateKeyRequestInput): Promise<CreatedKey> {
    return this.#call('POST', '/keys', body) as Promise<CreatedKey>;
  }

  revokeKey(keyId: string): Promise<{ key_id: string; revoked_at: string }> {
    return this.#call('POST', `/keys/${encodeURIComponent(keyId)}/revoke`, {}) as Promise<{
      key_id: string;
      revoked_at: string;
    }>;
  }

  addFault(fault: FaultRequest): Promise<unknown> {
    return this.#call('POST', '/controls/faults', fault);
  }

  clearFaults(): Promise<unknown> {
    return this.#call('DELETE', '/controls/faults');
  }

  async #call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) {
    const deadline = deadlineOf(systemClock, this.#timeoutMs);
    try {
      return await this.#exchange(method, path, body, deadline.signal);
    } catch (error) {
      const failure = boundedReadFailure(error, deadline, this.#timeoutMs);
      if (failure !== error) {
        throw new PaperbotError(
          'EMULATOR_UNREACHABLE',
          `the emulator at ${this.#baseUrl} did not answer within ${this.#timeoutMs} ms`,
          { cause: error, retryable: true },
        );
      }
      throw error;
    } finally {
      deadline.dispose();
    }
  }

  async #exchange(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: unknown,
    signal: AbortSignal,
  ) {
    const url = `${this.#baseUrl}${ADMIN_PREFIX}${path}`;
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(url, {
        method,
        headers: {
          authorization: `Bearer ${this.#token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
      });
    } catch (error) {
      throw new PaperbotError(
        'EMULATOR_UNREACHABLE',
        `cannot reach the emulator at ${this.#baseUrl}: ${(error as Error).message}`,
        { cause: error, retryable: true },
      );
    }
    let text: string;
    try {
      text = await readAtMost(response.body, ADMIN_MAX_RESPONSE_BYTES);
    } catch (error) {
      if (signal.aborted) throw error;
      throw new PaperbotError(
        'EMULATOR_BAD_RESPONSE',
        `the emulator at ${this.#baseUrl} answered ${response.statusCode} with a body that could not be read: ${(error as Error).message}`,
        { cause: error },
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PaperbotError(
        'EMULATOR_BAD_RESPONSE',
        `the emulator at ${this.#baseUrl} answered ${response.statusCode} without JSON`,
      );
    }
    if (response.statusCode >= 400) {
      const envelope = ErrorEnvelope.safeParse(json);
      if (envelope.success) {
        throw new PaperbotError(envelope.data.error.code, envelope.data.error.message, {
          details: {
            ...envelope.data.error.details,
            status: response.statusCode,
          },
          retryable: envelope.data.error.retryable,
        });
      }
      throw new PaperbotError(
        'EMULATOR_BAD_RESPONSE',
        `the emulator answered ${response.statusCode}`,
      );
    }
    return json;
  }
}
