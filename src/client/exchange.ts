/**
 * One HTTP exchange through undici's handler interface (`Dispatcher.dispatch`): the status, the
 * headers and the whole body as text, read to its end and bounded. No stream object, no async
 * iterator and no abort signal per response: on the order path the client's own share of a
 * loopback round trip is mostly those (`test/bench/client.bench.ts`).
 */
import type { Dispatcher } from 'undici';

/** The answer was larger than the client reads (`RestClientOptions.maxResponseBytes`). */
export class ResponseTooLarge extends Error {}

export interface ExchangeResult {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

export class Exchange implements Dispatcher.DispatchHandler {
  /** Settles once the body has ended (or the exchange failed, or was aborted). */
  readonly done: Promise<ExchangeResult>;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private chunks: Buffer[] = [];
  private size = 0;
  private controller: Dispatcher.DispatchController | null = null;
  /** Why it was aborted before undici started it: aborted as soon as it does. */
  private abortedBefore: Error | null = null;
  private settled = false;
  private resolve!: (result: ExchangeResult) => void;
  private reject!: (error: unknown) => void;

  constructor(private readonly maxBytes: number) {
    this.done = new Promise<ExchangeResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** Stops the exchange; `done` rejects with `reason` (at once, even before it started). */
  abort(reason: Error): void {
    if (this.settled) return;
    if (this.controller !== null) {
      this.controller.abort(reason);
      return;
    }
    this.abortedBefore = reason;
    this.fail(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortedBefore !== null) controller.abort(this.abortedBefore);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.byteLength;
    if (this.size > this.maxBytes) {
      this.chunks = [];
      controller.abort(new ResponseTooLarge());
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    const chunks = this.chunks;
    const text =
      chunks.length === 1
        ? (chunks[0] as Buffer).toString('utf8')
        : Buffer.concat(chunks).toString('utf8');
    this.resolve({ status: this.status, headers: this.headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.reject(error);
  }
}
