/**
 * An emulator on a real loopback port and clients against it, all on one VirtualClock. The
 * clients see the clock through `AutoAdvanceClock`s, so their short waits (backoff,
 * Retry-After) pass in virtual time by themselves; the test moves the clock for everything else.
 */
import { firstValueFrom } from 'rxjs';
import { filter } from 'rxjs/operators';
import {
  type ConnectionState,
  RestClient,
  type RestClientOptions,
  StreamClient,
  type StreamClientOptions,
} from '../../src/client/index.ts';
import { VirtualClock } from '../../src/core/clock.ts';
import {
  type CreateKeyOptions,
  type RunningEmulator,
  type StartEmulatorOptions,
  startEmulator,
} from '../../src/emulator/start.ts';
import type { PrivateEvent } from '../../src/protocol/index.ts';
import type { Credential } from '../../src/signing/index.ts';
import { AutoAdvanceClock, START_MS, turn, until } from './helpers.ts';

export interface EnvironmentOptions {
  readonly emulator?: Partial<StartEmulatorOptions>;
  readonly key?: CreateKeyOptions;
  readonly rest?: Partial<RestClientOptions>;
}

export class Environment {
  readonly clients: RestClient[] = [];
  readonly streams: StreamClient[] = [];

  private constructor(
    readonly clock: VirtualClock,
    public emulator: RunningEmulator,
    readonly credential: Credential,
    readonly rest: RestClient,
    readonly restClock: AutoAdvanceClock,
    private readonly emulatorOptions: Partial<StartEmulatorOptions>,
  ) {
    this.clients.push(rest);
  }

  static async start(options: EnvironmentOptions = {}): Promise<Environment> {
    const clock = new VirtualClock(START_MS);
    const emulatorOptions: Partial<StartEmulatorOptions> = {
      seed: 11,
      rateLimit: { quota: 100_000, windowMs: 60_000 },
      ...options.emulator,
    };
    const emulator = await startEmulator({ clock, ...emulatorOptions });
    const credential = emulator.createKey(options.key);
    const restClock = new AutoAdvanceClock(clock, 120_000);
    const rest = new RestClient({
      credential,
      clock: restClock,
      random: () => 0.5,
      requestTimeoutMs: 600_000,
      // The emulator is read strictly, so that it cannot drift (contract section 7).
      reading: 'strict',
      ...options.rest,
    });
    return new Environment(clock, emulator, credential, rest, restClock, emulatorOptions);
  }

  /** Another REST client with this environment's key. */
  restClient(options: Partial<RestClientOptions> = {}): RestClient {
    const client = new RestClient({
      credential: this.credential,
      clock: new AutoAdvanceClock(this.clock, 120_000),
      random: () => 0.5,
      requestTimeoutMs: 600_000,
      reading: 'strict',
      ...options,
    });
    this.clients.push(client);
    return client;
  }

  /**
   * A stream client whose short waits (reconnect backoff up to 1 s) pass by themselves; its
   * watchdog and reply timeouts are long unless set.
   */
  stream(options: Partial<StreamClientOptions> = {}): StreamClient {
    const stream = new StreamClient({
      rest: this.rest,
      clock: new AutoAdvanceClock(this.clock, 5_000),
      random: () => 0.5,
      heartbeatTimeoutMs: 3_600_000,
      replyTimeoutMs: 3_600_000,
      connectTimeoutMs: 3_600_000,
      reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 },
      ...options,
    });
    this.streams.push(stream);
    return stream;
  }

  get accountId(): string {
    return this.credential.accountId;
  }

  /** The account's highest private sequence, straight from the engine. */
  head(): number {
    return this.emulator.exchange.lastSequence(this.accountId);
  }

  /** Every event of the account, read from the engine (not through the client under test). */
  log(): PrivateEvent[] {
    const out: PrivateEvent[] = [];
    let after = 0;
    for (;;) {
      const page = this.emulator.exchange.listEvents(this.accountId, after, 200);
      out.push(...page.data);
      if (!page.has_more) return out;
      after = page.next_after_sequence;
    }
  }

  /** Moves virtual time in steps, yielding to socket I/O after each one. */
  async advance(totalMs: number, stepMs = 1_000): Promise<void> {
    for (let moved = 0; moved < totalMs; moved += stepMs) {
      this.clock.advanceBy(Math.min(stepMs, totalMs - moved));
      for (let index = 0; index < 20; index += 1) await turn();
    }
  }

  /** Stops the emulator and starts it again on the same port and data dir, same clock. */
  async restartEmulator(): Promise<void> {
    const { port, dataDir } = this.emulator;
    await this.emulator.close();
    this.emulator = await startEmulator({
      clock: this.clock,
      ...this.emulatorOptions,
      port,
      dataDir,
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.streams.map((stream) => stream.close()));
    await Promise.all(this.clients.map((client) => client.close()));
    await this.emulator.close();
  }
}

export function stateReached(stream: StreamClient, state: ConnectionState): Promise<unknown> {
  return firstValueFrom(stream.state$.pipe(filter((value) => value === state)));
}

/** Waits until the stream has delivered everything up to the engine's head. */
export async function caughtUp(environment: Environment, stream: StreamClient): Promise<void> {
  await until(
    () => stream.lastSequence === environment.head(),
    `the stream to reach sequence ${environment.head()} (at ${stream.lastSequence})`,
  );
}

let counter = 0;

/** A fresh request id (8..80 characters). */
export function requestId(label = 'req'): string {
  counter += 1;
  return `${label}-${counter.toString().padStart(6, '0')}`;
}
