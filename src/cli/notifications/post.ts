/**
 * One webhook POST with undici: a whole-request timeout on the injected clock, and at most
 * `MAXIMUM_ANSWER_BYTES` of the answer read (its text is never needed, only its status).
 */
import { request } from 'undici';
import type { Clock } from '../../core/clock.ts';

export const MAXIMUM_ANSWER_BYTES = 16 * 1024;

export interface PostResult {
  readonly ok: boolean;
  /** The HTTP status, or null when no answer came (refused, timed out). */
  readonly status: number | null;
  readonly error: string | null;
}

export type PostJson = (url: string, body: unknown) => Promise<PostResult>;

export function createPostJson(clock: Clock, timeoutMs: number): PostJson {
  return async (url, body) => {
    const controller = new AbortController();
    const timer = clock.setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'paperbot' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      let read = 0;
      for await (const chunk of response.body) {
        read += (chunk as Buffer).length;
        if (read >= MAXIMUM_ANSWER_BYTES) {
          response.body.destroy();
          break;
        }
      }
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      return { ok, status: response.statusCode, error: ok ? null : `HTTP ${response.statusCode}` };
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const reason = controller.signal.aborted
        ? `no answer within ${timeoutMs} ms`
        : typeof code === 'string'
          ? code
          : 'request failed';
      return { ok: false, status: null, error: reason };
    } finally {
      clock.clearTimeout(timer);
    }
  };
}
