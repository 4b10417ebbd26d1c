/**
 * The bot process, assembled: a checked config in, a running kernel out. This is the one place
 * that chooses the venue (a key file's service, or an embedded emulator in this process), opens
 * the journal, and wires logs, metrics, the HTTP endpoint and the kill switch around the kernel.
 *
 * Order matters and is fixed: everything local (config, key file, journal) is checked before
 * the first byte goes out; the HTTP endpoint answers 503 from the start until the kernel runs;
 * shutdown goes in reverse, with the kernel's own shutdown (cancel all, disarm the dead-man)
 * first while the venue connection is still up.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Logger as PinoLogger } from 'pino';
import { filter, type Subscription } from 'rxjs';
import { type Clock, isoTimestamp, systemClock } from '../../core/clock.ts';
import { isPaperbotError, PaperbotError } from '../../core/errors.ts';
import { fromPino, type Logger, withFields } from '../../core/logger.ts';
import { type ReadingSnapshot, RestClient, StreamClient } from '../../client/index.ts';
import { type RunningEmulator, startEmulator } from '../../emulator/index.ts';
import { Journal } from '../../runtime/journal/index.ts';
import { Kernel, type KernelStatus } from '../../runtime/kernel/index.ts';
import {
  createLiveVenue,
  type LiveVenue,
  type RouteReadinessStatus,
} from '../../runtime/live/index.ts';
import { installKillSignal, KillSwitch, type SignalSource } from '../../runtime/risk/index.ts';
import type { Credential } from '../../signing/index.ts';
import {
  executorSettings,
  reconcilerSettings,
  shutdownSettings,
  trackerSettings,
} from '../../runtime/config.ts';
import { deadmanSettings, embeddedEmulatorOptions, type LoadedBotConfig } from './config.ts';
import { type BotHttpServer, type HealthReport, startBotHttpServer } from './http.ts';
import { intentLogFields } from '../logging.ts';
import { IntentLogVolume } from './intent-log-volume.ts';
import { startJournalRetention, storeFileSizes } from './journal-retention.ts';
import { createBotLogger } from './logging.ts';
import { type BotMetrics, createBotMetrics } from './metrics.ts';
import { logReadingNotices } from './reading-log.ts';
import { loadVenueKeyFile } from './venue-key.ts';
import { venueTransportOf } from './venue-transport.ts';
import { sessionPnl } from './status-view.ts';
import { type BotDashboard, dashboardOfConfig, endpointTokenOfConfig } from '../dashboard/index.ts';
import { createEndpointAccess } from './endpoint-access.ts';
import { parseLeadTime, VenueKeyWatch, type VenueKeyStatus } from '../../runtime/venue-key.ts';
import { removeAddressFile, writeAddressFile } from './address-file.ts';
import { fillFields, fillTitle } from '../notifications/events.ts';
import { type Notifier, notifierOfConfig } from '../notifications/notifier.ts';

/** Where the embedded emulator's account is remembered between runs (no secret in it). */
export const EMBEDDED_ACCOUNT_FILE = 'bot-account.json';

export type BotPhase = HealthReport['phase'];

export interface StartBotOptions {
  readonly loaded: LoadedBotConfig;
  /** Default systemClock. */
  readonly clock?: Clock;
  /** Default: a pino logger from the config's `logging:` section, on stdout. */
  readonly logger?: PinoLogger;
  /** Where the kill signal is listened for; default `process`, null for none. */
  readonly signalSource?: SignalSource | null;
  /** Node.js process metrics in the registry; default true. */
  readonly processMetrics?: boolean;
  /**
   * Aborting it stops a start still under way (a venue that does not answer, say): what was
   * started is closed and `start` rejects with `BOT_START_ABORTED`.
   */
  readonly signal?: AbortSignal;
}

/** How the bot's shutdown ended, for its exit status. */
export interface BotStopReport {
  /** A read of the account's open orders came back empty (or no kernel had started). */
  readonly confirmed: boolean;
  /** Orders that may still be open when not confirmed. */
  readonly remainingOrderIds: readonly string[];
}

export interface BotVenueInfo {
  readonly baseUrl: string;
  readonly embedded: boolean;
  readonly accountId: string;
}

/** What `/status` answers. */
export interface BotStatusDocument extends KernelStatus {
  /** The venue's route readiness, with the last read's error and its cause. */
  readonly routeReadiness: RouteReadinessStatus | null;
  /** How the venue is read and what the reading met (tolerant reading); null before it exists. */
  readonly reading: ReadingSnapshot | null;
  readonly bot: {
    readonly pid: number;
    readonly startedAt: string | null;
    readonly now: string;
    readonly phase: BotPhase;
    readonly venue: BotVenueInfo;
    readonly journal: string;
    readonly metricsUrl: string | null;
  };
  readonly pnl: {
    readonly equity: string | null;
    readonly startEquity: string | null;
    readonly session: string | null;
    readonly unrealized: string | null;
  };
  /** The venue key: valid, expiring (warned), expired or revoked (trading halted). */
  readonly venueKey: VenueKeyStatus | null;
}

interface Resources {
  emulator: RunningEmulator | null;
  rest: RestClient | null;
  stream: StreamClient | null;
  live: LiveVenue | null;
  journal: Journal | null;
  kernel: Kernel | null;
  http: BotHttpServer | null;
  metrics: BotMetrics | null;
  dashboard: BotDashboard | null;
  notifier: Notifier | null;
  keyWatch: VenueKeyWatch | null;
  killSwitch: KillSwitch | null;
  subscriptions: Subscription[];
  cleanups: (() => void)[];
}

interface EmbeddedAccount {
  readonly account_id: string;
  readonly key_id: string;
}

function readEmbeddedAccount(dataDir: string): EmbeddedAccount | null {
  try {
    const parsed = JSON.parse(readFileSync(join(dataDir, EMBEDDED_ACCOUNT_FILE), 'utf8')) as {
      account_id?: unknown;
      key_id?: unknown;
    };
    if (typeof parsed.account_id === 'string' && typeof parsed.key_id === 'string') {
      return { account_id: parsed.account_id, key_id: parsed.key_id };
    }
  } catch {
    // None yet, or unreadable: a new account is made.
  }
  return null;
}

/**
 * A fresh key for the embedded emulator. With a data folder the account is kept between runs
 * (so the journal and the account stay together); the previous run's key is revoked, since its
 * private key lived only in that process.
 */
function embeddedCredential(emulator: RunningEmulator, logger: Logger): Credential {
  const dataDir = emulator.dataDir;
  if (dataDir === null) return emulator.createKey();
  const previous = readEmbeddedAccount(dataDir);
  let credential: Credential;
  if (previous !== null && emulator.exchange.hasAccount(previous.account_id)) {
    try {
      emulator.revokeKey(previous.key_id);
    } catch {
      // Already revoked or unknown: nothing to do.
    }
    credential = emulator.createKey({ accountId: previous.account_id });
    logger.info('embedded emulator: resuming the account', { account_id: credential.accountId });
  } else {
    credential = emulator.createKey();
  }
  writeFileSync(
    join(dataDir, EMBEDDED_ACCOUNT_FILE),
    `${JSON.stringify({ account_id: credential.accountId, key_id: credential.keyId })}\n`,
    { mode: 0o600 },
  );
  return credential;
}

export class Bot {
  private phaseValue: BotPhase = 'starting';
  private startedAt: number | null = null;
  private startEquity: string | null = null;
  private stopping: Promise<BotStopReport> | null = null;
  private stopReport: BotStopReport = { confirmed: true, remainingOrderIds: [] };

  private constructor(
    private readonly loaded: LoadedBotConfig,
    private readonly clock: Clock,
    readonly logger: Logger,
    private readonly resources: Resources,
    private venueInfo: BotVenueInfo | null,
  ) {}

  get phase(): BotPhase {
    return this.phaseValue;
  }

  /** The local HTTP endpoint (`/metrics`, `/health`, `/status`), or null when disabled. */
  get httpUrl(): string | null {
    return this.resources.http?.url ?? null;
  }

  get venue(): BotVenueInfo | null {
    return this.venueInfo;
  }

  /** The embedded emulator, when the config names no key file. */
  get emulator(): RunningEmulator | null {
    return this.resources.emulator;
  }

  get kernel(): Kernel | null {
    return this.resources.kernel;
  }

  get journalPath(): string {
    return resolve(this.loaded.config.journal.path);
  }

  health(): HealthReport {
    const kernel = this.resources.kernel;
    if (kernel === null || this.phaseValue !== 'running') {
      return { phase: this.phaseValue, tradingState: null, mayTrade: false };
    }
    const status = kernel.status();
    const refusing = this.refusing(status.refusing);
    return {
      phase: 'running',
      tradingState: status.tradingState,
      mayTrade: status.mayTrade && !this.keyEnded,
      refusing,
      routeReadiness: this.resources.live?.routeReadiness() ?? null,
    };
  }

  /** The venue refused the key (revoked or expired): nothing may be traded with it. */
  private get keyEnded(): boolean {
    return this.resources.keyWatch?.ended ?? false;
  }

  /** The kernel's refusing gates, and the venue key once it ended (revoked or expired). */
  private refusing(kernel: KernelStatus['refusing']): KernelStatus['refusing'] {
    const key = this.resources.keyWatch;
    if (key === null || !key.ended) return kernel;
    return [...kernel, { gate: 'venue key', reason: `${key.status.state}: ${key.status.reason}` }];
  }

  /** The `/status` document; null until the kernel exists. */
  status(): BotStatusDocument | null {
    const kernel = this.resources.kernel;
    if (kernel === null || this.venueInfo === null) return null;
    const status = kernel.status();
    const equity = status.account?.total_equity ?? null;
    if (this.startEquity === null && equity !== null) this.startEquity = equity;
    // A dead key refuses every call: whatever the other gates say, nothing may be traded.
    const refusing = this.refusing(status.refusing);
    return {
      ...status,
      mayTrade: status.mayTrade && !this.keyEnded,
      refusing,
      routeReadiness: this.resources.live?.routeReadiness() ?? null,
      reading: this.resources.rest?.reading.snapshot() ?? null,
      bot: {
        pid: process.pid,
        startedAt: this.startedAt === null ? null : isoTimestamp(this.startedAt),
        now: isoTimestamp(this.clock.now()),
        phase: this.phaseValue,
        venue: this.venueInfo,
        journal: this.journalPath,
        metricsUrl: this.httpUrl,
      },
      pnl: {
        equity,
        startEquity: this.startEquity,
        session: sessionPnl(this.startEquity, equity),
        unrealized: status.account?.unrealized_pnl ?? null,
      },
      venueKey: this.resources.keyWatch?.status ?? null,
    };
  }

  /**
   * Starts everything; on failure, closes what was started and rethrows. Local checks (the key
   * file's permissions and content) happen before any connection is made.
   */
  static async start(options: StartBotOptions): Promise<Bot> {
    const { loaded } = options;
    const config = loaded.config;
    const clock = options.clock ?? systemClock;
    const logger = fromPino(
      options.logger ??
        createBotLogger({ level: config.logging.level, format: config.logging.format, clock }),
    );
    const resources: Resources = {
      emulator: null,
      rest: null,
      stream: null,
      live: null,
      journal: null,
      kernel: null,
      http: null,
      metrics: null,
      dashboard: null,
      notifier: null,
      keyWatch: null,
      killSwitch: null,
      subscriptions: [],
      cleanups: [],
    };
    const bot = new Bot(loaded, clock, logger, resources, null);
    const signal = options.signal;
    // Closing the clients makes a connection attempt under way give up at once.
    let aborting: Promise<void> | null = null;
    const onAbort = () => {
      aborting = bot.release('stopped during start');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await bot.assemble(options);
    } catch (error) {
      bot.phaseValue = 'stopping';
      await aborting;
      await bot.release('start failed');
      bot.phaseValue = 'stopped';
      if (signal?.aborted === true) {
        logger.info('stopped', { event: 'bot.stopped', reason: 'stopped during start' });
        throw new PaperbotError('BOT_START_ABORTED', 'stopped before the bot was running', {
          cause: error,
        });
      }
      throw error;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    return bot;
  }

  private async assemble(options: StartBotOptions): Promise<void> {
    const { loaded } = options;
    // After each wait: an abort during it has closed what existed, and nothing more may open.
    const checkAborted = () => {
      if (options.signal?.aborted === true) {
        throw new PaperbotError('BOT_START_ABORTED', 'stopped before the bot was running');
      }
    };
    checkAborted();
    const config = loaded.config;
    const resources = this.resources;
    const clock = this.clock;
    const logger = this.logger;

    // 1. Local checks first, before any connection: the key file (its mode checked as it is
    //    read), then the journal (exclusive, so a second bot on the same file is refused).
    let credential: Credential | null =
      config.venue.key_file === null
        ? null
        : await loadVenueKeyFile(resolve(config.venue.key_file), (message) =>
            logger.warn(message, { event: 'venue.key_file' }),
          );
    checkAborted();
    const transport = await venueTransportOf(config.venue);
    checkAborted();
    const journalPath = this.journalPath;
    await mkdir(dirname(journalPath), { recursive: true });
    checkAborted();
    resources.journal = Journal.open(journalPath, {
      now: () => clock.now(),
      durability: config.journal.durability,
    });

    // 2. Without a key file, an emulator in this process and a fresh key for it.
    const embedded = credential === null;
    if (credential === null) {
      const emulatorSettings = config.venue.emulator;
      const emulatorConfig = loaded.emulatorConfig;
      resources.emulator = await startEmulator({
        ...embeddedEmulatorOptions(emulatorSettings, emulatorConfig, clock, loaded.wireProfile),
        logger: withFields(logger, { component: 'emulator' }),
      });
      credential = embeddedCredential(resources.emulator, logger);
      checkAborted();
    }
    this.venueInfo = {
      baseUrl: credential.apiBaseUrl,
      embedded,
      accountId: credential.accountId,
    };

    // 3. Metrics and the HTTP endpoint, answering 503 until the kernel runs.
    const metrics = createBotMetrics({
      clock,
      ...(options.processMetrics === undefined ? {} : { processMetrics: options.processMetrics }),
    });
    resources.metrics = metrics;
    // One token for the whole endpoint: the access policy off loopback and the controls.
    const token = config.metrics.enabled ? endpointTokenOfConfig(config.dashboard) : null;
    resources.dashboard = dashboardOfConfig(config, loaded.strategies, {
      clock,
      logger,
      ...(token === null ? {} : { token }),
      status: () => this.status(),
      kernel: () => this.resources.kernel,
      killSwitch: () => this.resources.killSwitch,
      notifications: () => this.resources.notifier?.counts() ?? null,
    });
    if (config.metrics.enabled) {
      const dashboard = resources.dashboard;
      resources.http = await startBotHttpServer({
        ...(dashboard === null
          ? {}
          : { routes: (request, response) => dashboard.server.handle(request, response) }),
        host: config.metrics.host,
        port: config.metrics.port,
        access: createEndpointAccess({
          binding: config.metrics.host,
          token,
          allowedHosts: config.metrics.allowed_hosts,
        }),
        registry: metrics.registry,
        health: () => this.health(),
        status: () => this.status(),
      });
      // So `paperbot status` finds this bot whatever port it took (`--metrics-port 0`).
      if (this.journalPath !== ':memory:') {
        const address = { url: resources.http.url, pid: process.pid };
        writeAddressFile(this.journalPath, address);
        resources.cleanups.push(() => removeAddressFile(this.journalPath));
      }
    }
    checkAborted();

    // 4. The venue connection.
    const venueLogger = withFields(logger, { component: 'venue' });
    resources.rest = new RestClient({
      credential,
      clock,
      requestTimeoutMs: config.venue.request_timeout_ms,
      rateLimiter: true,
      transport,
      reading: config.venue.reading,
      wireProfile: loaded.wireProfile,
    });
    metrics.attachReading(resources.rest.reading);
    resources.subscriptions.push(logReadingNotices(resources.rest.reading, logger));
    // The private stream resumes after the last sequence the journal applied (from the head on a
    // new journal): what happened while the bot was down is read from the event log.
    const resumeAfterSequence = resources.journal.privateCursor()?.lastSequence ?? null;
    resources.stream = new StreamClient({
      rest: resources.rest,
      clock,
      startAfterSequence: resumeAfterSequence ?? 'latest',
    });
    metrics.attachStream(resources.stream);
    const journal = resources.journal;
    metrics.attachJournal(() => (journal.isOpen ? journal.retention.stats() : null));
    const storeDir = resources.emulator?.dataDir ?? null;
    if (storeDir !== null) metrics.attachStore(() => storeFileSizes(storeDir));
    resources.subscriptions.push(
      resources.stream.state$.pipe(filter((state) => state !== 'idle')).subscribe((state) => {
        const level = state === 'failed' ? 'error' : state === 'backoff' ? 'warn' : 'info';
        logger[level](`stream ${state}`, { event: 'stream.state', state });
      }),
    );
    resources.live = createLiveVenue({
      rest: resources.rest,
      stream: resources.stream,
      clock,
      logger: venueLogger,
      bookPollMs: config.market_data.book_poll_ms,
      tradesPollMs: config.market_data.trades_poll_ms,
      marketIds: config.market_data.markets,
      resumeAfterSequence,
    });
    await resources.live.start();
    checkAborted();
    // A scope the venue said the key lacks (SCOPE_REQUIRED on the stream's auth) hides private
    // events the runtime needs; trading without them would miss fills, so the start stops here.
    const lacking = resources.stream.lackingScopes;
    if (lacking.length > 0) {
      throw new PaperbotError(
        'SCOPE_REQUIRED',
        `the venue says the key lacks ${lacking.join(', ')}; the bot needs every private channel: use a key with these scopes (venue.wire.scopes names them the venue's way)`,
        { details: { lacking_scopes: lacking } },
      );
    }

    // 5. The kernel, its venue watched for a revoked or expired key.
    const keyWarning = config.venue.key_expiry_warning;
    const keyWatch = new VenueKeyWatch({
      clock,
      keyId: credential.keyId,
      expiresAt: credential.expiresAt,
      warningLeadMs: keyWarning === null ? null : parseLeadTime(keyWarning),
      logger: withFields(logger, { component: 'venue' }),
      onEnded: (reason) => {
        this.resources.kernel?.gate.halt(reason, 'venue_key');
        // Its last signed poll: public market data reads go on, for the dashboard's marks.
        this.resources.live?.stopRouteReadiness();
      },
    });
    resources.keyWatch = keyWatch;
    resources.subscriptions.push(
      resources.stream.errors$.subscribe((error) => keyWatch.observe(error)),
    );
    const kernel = Kernel.create({
      clock,
      venue: keyWatch.wrap(resources.live.venue),
      marketData: resources.live.marketData,
      journal: resources.journal,
      strategies: loaded.strategies.map((strategy) => ({
        id: strategy.id,
        definition: strategy.definition,
        params: strategy.rawParams,
      })),
      risk: config.risk,
      execution: executorSettings(config.execution),
      tracker: trackerSettings(config.tracker),
      reconciler: reconcilerSettings(config.reconciler),
      deadman: deadmanSettings(config.deadman),
      shutdown: shutdownSettings(config.shutdown),
      // The kernel names its parts itself (`component`); a binding here would repeat the key.
      logger,
      routeReady$: resources.live.routeReadiness$,
    });
    resources.kernel = kernel;
    // A key that ended before the kernel existed (the stream's first session) halts it now.
    if (keyWatch.ended) {
      kernel.gate.halt(
        `venue key ${keyWatch.status.state}: ${keyWatch.status.reason}`,
        'venue_key',
      );
    }
    metrics.attachKernel(kernel);
    resources.notifier = notifierOfConfig(config.notifications, {
      clock,
      logger: withFields(logger, { component: 'notifications' }),
      status: () => this.status(),
    });
    resources.notifier?.attach(kernel, resources.stream.state$, keyWatch.status$);
    resources.dashboard?.attach(kernel, resources.stream, resources.live);
    this.subscribeLogs(kernel);

    // 6. The kill switch, started before trading starts so a kill file present now halts it.
    // The file, the signal and the dashboard all move this one switch.
    const killSwitch = config.risk.kill_switch;
    const theSwitch = new KillSwitch({
      file: killSwitch.file === null ? null : resolve(killSwitch.file),
      clock,
      target: kernel.gate,
      pollMs: killSwitch.poll_ms,
      logger: withFields(logger, { component: 'kill_switch' }),
    });
    resources.killSwitch = theSwitch;
    theSwitch.start();
    resources.cleanups.push(() => theSwitch.stop());
    const signalSource = options.signalSource === undefined ? process : options.signalSource;
    if (killSwitch.signal !== null && signalSource !== null) {
      resources.cleanups.push(installKillSignal(signalSource, theSwitch, killSwitch.signal));
    }

    await kernel.start();
    checkAborted();
    // Retention of the journal, in the background: settled rows older than the window leave.
    resources.cleanups.push(
      startJournalRetention({
        journal: resources.journal,
        clock,
        logger: withFields(logger, { component: 'journal' }),
        settings: config.journal.retention,
        liveOrderIds: () => kernel.status().openOrders.map((order) => order.order_id),
      }),
    );
    this.phaseValue = 'running';
    this.startedAt = clock.now();
    // The session's PnL counts from the equity the start-up reconciliation read.
    this.startEquity = kernel.status().account?.total_equity ?? null;
    const markets = resources.live.marketData.markets().map((market) => market.market_id);
    logger.info(
      `paperbot running on ${credential.apiBaseUrl}${embedded ? ' (embedded emulator)' : ''}: ${markets.length} markets, strategies ${loaded.strategies.map((strategy) => strategy.id).join(', ')}`,
      {
        event: 'bot.started',
        venue: credential.apiBaseUrl,
        embedded_emulator: embedded,
        account_id: credential.accountId,
        key_id: credential.keyId,
        markets,
        strategies: loaded.strategies.map((strategy) => `${strategy.id} (${strategy.name})`),
        journal: journalPath,
        metrics: resources.http === null ? null : `${resources.http.url}/metrics`,
        status: resources.http === null ? null : `${resources.http.url}/status`,
        dashboard:
          resources.http === null || resources.dashboard === null ? null : `${resources.http.url}/`,
        kill_file: killSwitch.file === null ? null : resolve(killSwitch.file),
      },
    );
  }

  /** The bot's own log lines: one per intent that reached the venue, and one per fill. */
  private subscribeLogs(kernel: Kernel): void {
    const logger = withFields(this.logger, { component: 'bot' });
    // Beyond `logging.intent_lines_max_per_minute`, intent lines go to debug; a summary each hour.
    const volume = new IntentLogVolume({
      clock: this.clock,
      logger,
      maxPerMinute: this.loaded.config.logging.intent_lines_max_per_minute,
      summaryEveryMs: this.loaded.config.logging.summary_every,
    });
    this.resources.cleanups.push(volume.start());
    this.resources.subscriptions.push(
      kernel.outcomes$.subscribe((outcome) => {
        const intent = outcome.intent;
        const fields: Record<string, unknown> = {
          event: `intent.${outcome.status}`,
          strategy: intent.strategyId,
          request_id: intent.requestId,
          client_order_id: intent.clientOrderId,
          kind: intent.intent.kind,
          ...intentLogFields(intent.intent),
        };
        switch (outcome.status) {
          case 'accepted':
            logger[volume.levelOf('accepted', 'info')]('intent submitted', {
              ...fields,
              order_id: outcome.orderId,
            });
            break;
          case 'rejected':
            logger[volume.levelOf('rejected', 'warn')]('intent submitted', {
              ...fields,
              code: outcome.code,
              reason: outcome.message,
              ...(outcome.issues === undefined ? {} : { issues: outcome.issues }),
            });
            break;
          case 'unknown':
            logger[volume.levelOf('unknown', 'warn')]('intent submitted', {
              ...fields,
              reason: outcome.reason,
            });
            break;
          case 'resolved':
            logger[volume.levelOf('resolved', 'info')]('intent resolved', {
              ...fields,
              resolution: outcome.resolution,
              order_id: outcome.orderId,
            });
            break;
          case 'filled':
            logger[volume.levelOf('filled', 'info')]('order filled', {
              ...fields,
              order_id: outcome.orderId,
              filled_quantity: outcome.filledQuantity,
              average_price: outcome.averagePrice,
            });
            break;
          case 'denied':
            logger[volume.levelOf('denied', 'debug')]('intent denied', {
              ...fields,
              denials: outcome.denials,
            });
            break;
        }
      }),
      kernel.fills$.subscribe((fill) =>
        logger[volume.levelOf('fill', 'info')](fillTitle(fill), {
          event: 'fill',
          ...fillFields(fill),
        }),
      ),
    );
  }

  /**
   * Stops the kernel (strategies stop, every order is cancelled and the account read back until
   * none is open, the dead-man disarmed), then closes the venue connection, the journal, the
   * HTTP endpoint and the embedded emulator. Resolves with whether every order was confirmed
   * closed (`paperbot run` exits 3 when not). Safe to call twice.
   */
  stop(reason: string): Promise<BotStopReport> {
    this.stopping ??= (async () => {
      this.phaseValue = 'stopping';
      this.logger.info(`stopping: ${reason}`, { event: 'bot.stopping', reason });
      await this.release(reason);
      this.phaseValue = 'stopped';
      this.logger.info('stopped', { event: 'bot.stopped', reason });
      return this.stopReport;
    })();
    return this.stopping;
  }

  /** Closes whatever exists, in reverse order of start; each resource once, however called. */
  private async release(reason: string): Promise<void> {
    const resources = this.resources;
    const attempt = async (what: string, work: () => unknown): Promise<void> => {
      try {
        await work();
      } catch (error) {
        this.logger.error(`shutdown: ${what} failed`, {
          event: 'bot.shutdown_error',
          step: what,
          code: isPaperbotError(error) ? error.code : undefined,
          error,
        });
      }
    };
    // Everything is taken at once, so a second release running meanwhile closes nothing twice.
    const cleanups = resources.cleanups.splice(0);
    const subscriptions = resources.subscriptions.splice(0);
    const { kernel, metrics, live, stream, rest, journal, http, emulator, dashboard, notifier } =
      resources;
    Object.assign(resources, {
      notifier: null,
      kernel: null,
      metrics: null,
      dashboard: null,
      live: null,
      stream: null,
      rest: null,
      journal: null,
      http: null,
      emulator: null,
    });
    for (const cleanup of cleanups) await attempt('kill switch', cleanup);
    if (kernel !== null) {
      // Until the kernel says otherwise (a throw included), nothing is confirmed.
      this.stopReport = { confirmed: false, remainingOrderIds: [] };
      await attempt('kernel', async () => {
        const report = await kernel.stop(reason);
        this.stopReport = {
          confirmed: report.confirmed,
          remainingOrderIds: report.remainingOrderIds,
        };
        const fields = {
          event: 'bot.shutdown',
          cancelled: report.cancelled,
          confirmed: report.confirmed,
          disarmed: report.disarmed,
          remaining_order_ids: report.remainingOrderIds,
          error: report.error,
        };
        if (!report.confirmed) {
          this.logger.error(
            `shutdown could not confirm every order closed; the dead-man deadline is left armed; may remain open: ${report.remainingOrderIds.join(', ') || '(none known)'}`,
            fields,
          );
        } else if (report.error !== null) {
          this.logger.error('orders closed, but the dead-man switch could not be disarmed', fields);
        } else {
          this.logger.info('orders cancelled and the dead-man switch disarmed', fields);
        }
      });
    }
    for (const subscription of subscriptions) subscription.unsubscribe();
    // After the kernel's stop, so its last calls were still refused here with a dead key.
    resources.keyWatch?.dispose();
    metrics?.dispose();
    dashboard?.close();
    if (notifier !== null) {
      await attempt('notifications', async () => {
        const unsent = await notifier.drain(this.loaded.config.notifications.timeout_ms);
        if (unsent > 0) {
          this.logger.warn(`${unsent} notification events could not be sent before shutdown`, {
            event: 'notifications.unsent_at_shutdown',
            events: unsent,
          });
        }
      });
    }
    if (live !== null) await attempt('venue', () => live.stop());
    if (stream !== null) await attempt('stream', () => stream.close());
    if (rest !== null) await attempt('rest', () => rest.close());
    if (journal?.isOpen) await attempt('journal', () => journal.close());
    if (http !== null) await attempt('http', () => http.close());
    if (emulator !== null) await attempt('emulator', () => emulator.close());
  }
}

/** Thrown by `run` when the config or the key file is wrong: nothing was started. */
export function isConfigurationError(error: unknown): error is PaperbotError {
  return (
    isPaperbotError(error) &&
    (error.code === 'INVALID_CONFIG' ||
      error.code.startsWith('KEY_FILE_') ||
      error.code === 'CA_FILE_INVALID')
  );
}
