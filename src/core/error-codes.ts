/**
 * The registry of error codes (design rule 3: one error root, callers branch on `code`). The
 * service's own codes are the interface's table, `ErrorCode` in src/protocol/errors.ts; these
 * are the codes the project raises itself, by the folder that raises them first, and the codes
 * of Node and library errors it branches on. `test/core/error-codes.test.ts` checks that every
 * code raised or compared in `src` is listed here or in the interface's table, and that every
 * code listed here is used.
 */

export const LOCAL_ERROR_CODES = {
  /** Decimals, tick and step math, bounded reads. */
  core: ['INVALID_DECIMAL', 'INVALID_INCREMENT', 'OFF_GRID', 'READ_TIMEOUT', 'RESPONSE_TOO_LARGE'],
  /** Files a user names (src/core/user-file.ts). */
  userFiles: [
    'USER_FILE_NOT_FOUND',
    'USER_FILE_NOT_REGULAR',
    'USER_FILE_TIMEOUT',
    'USER_FILE_TOO_LARGE',
    'USER_FILE_UNREADABLE',
  ],
  /** Key files, signers, the SVC1 input. */
  signing: [
    'KEY_FILE_INSECURE',
    'KEY_FILE_NOT_FOUND',
    'KEY_FILE_UNREADABLE',
    'KEY_FILE_UNWRITABLE',
    'PRIVATE_KEY_INVALID',
    'SIGNING_CONFIG_INVALID',
    'SIGNING_INPUT_INVALID',
    'WIRE_PROFILE_INVALID',
  ],
  /**
   * The REST and stream clients, beside the service's codes (`CLIENT_ERROR_CODES` of
   * src/client is this list).
   */
  client: [
    /** The client was closed. */
    'CLIENT_CLOSED',
    /** The local clock is too far from the service's to sign a request the service accepts. */
    'CLOCK_SKEW',
    /** A signed endpoint was called on a client without a credential. */
    'CREDENTIAL_REQUIRED',
    /** A proxy variable (HTTPS_PROXY, HTTP_PROXY) that is not an http:// or https:// URL. */
    'INVALID_PROXY',
    /** The answer is not what the interface allows: broken JSON, wrong types, unknown fields. */
    'MALFORMED_RESPONSE',
    /** A 3xx answer. Redirects are never followed, so signed headers never leave their origin. */
    'REDIRECT_REFUSED',
    /** The caller's AbortSignal fired. */
    'REQUEST_ABORTED',
    /** No answer within the request timeout. For a mutation the outcome is unknown. */
    'REQUEST_TIMEOUT',
    /**
     * A placement answer for another command: its `request_id` or `client_order_id` differs
     * from the request's. The outcome of the request sent is unknown; recover it by request id.
     */
    'RESPONSE_ID_MISMATCH',
    /** The connection failed or broke. For a mutation the outcome is unknown unless never sent. */
    'TRANSPORT_FAILURE',
    /** A base URL that would send requests in clear text or carry user information. */
    'UNSAFE_URL',
  ],
  /** The local service beyond the interface table: server, admin, engine refusals. */
  emulator: [
    'ACCOUNT_NOT_FOUND',
    'ACCOUNT_RESET',
    'ADMIN_TOKEN_UNAVAILABLE',
    'ADMIN_UNAUTHORIZED',
    'BAD_REQUEST',
    'CANCEL_ALL_AFTER',
    'EMULATOR_BAD_RESPONSE',
    'EMULATOR_LISTEN_FAILED',
    'EMULATOR_UNREACHABLE',
    'EXPECTATION_FAILED',
    'HEADERS_TOO_LARGE',
    'HTTP_VERSION_NOT_SUPPORTED',
    'KEY_NOT_FOUND',
    'LIQUIDATION',
    'PAYLOAD_TOO_LARGE',
    'POST_ONLY_WOULD_TAKE',
    'REDUCE_ONLY_EXCEEDS_POSITION',
    'REDUCE_ONLY_NOTHING_TO_REDUCE',
    'SELF_TRADE_PREVENTED',
    'UNSUPPORTED_MEDIA_TYPE',
    'UPGRADE_REQUIRED',
  ],
  /** Kernel, strategies, executor, journal. */
  runtime: [
    'AMEND_TARGET_CHANGED',
    'INVALID_TIMESTAMP',
    'IN_FLIGHT_AT_RESTART',
    'JOURNAL_COMMAND_EXISTS',
    'JOURNAL_INTENT_MISSING',
    'JOURNAL_LOCKED',
    'JOURNAL_META_RESERVED',
    'JOURNAL_ROW_REFUSED',
    'JOURNAL_SCHEMA_INVALID',
    'JOURNAL_SCHEMA_TOO_NEW',
    'JOURNAL_SEQUENCE_INVALID',
    'JOURNAL_UNAVAILABLE',
    'KERNEL_STATE',
    'LANE_CLOSED',
    'MARKETS_NOT_LOADED',
    'NEVER_RECEIVED',
    'NOT_READ',
    'NOT_SENT',
    'ORDERS_REMAIN',
    'ORDER_COMMAND_IN_FLIGHT',
    'ROUTE_READINESS_UNREADABLE',
    'SIMULATION_NOT_READY',
    'STRATEGY_DUPLICATE_ID',
    'STRATEGY_INVALID_HISTORY',
    'STRATEGY_INVALID_ID',
    'STRATEGY_INVALID_INTENT',
    'STRATEGY_INVALID_MODULE',
    'STRATEGY_INVALID_NAME',
    'STRATEGY_INVALID_RESULT',
    'STRATEGY_INVALID_SEQUENCE',
    'STRATEGY_LOAD_FAILED',
    'STRATEGY_NOT_FOUND',
    'STRATEGY_PARAMS_INVALID',
    'STRATEGY_UNKNOWN_ID',
    'UNEXPECTED_ERROR',
  ],
  /** Recordings, backtests, reports, sweeps. */
  replay: [
    'BACKTEST_MISSING_MARKET',
    'BACKTEST_NO_DATA',
    'BACKTEST_STALLED',
    'BACKTEST_UNKNOWN_MARKET',
    'CALIBRATION_TOO_FEW_SAMPLES',
    'DATA_FETCH_FAILED',
    'IMPORT_EMPTY',
    'IMPORT_INVALID_ROW',
    'IMPORT_OFF_GRID',
    'IMPORT_READ_FAILED',
    'IMPORT_TIME_BACKWARDS',
    'IMPORT_TOO_LARGE_TO_SORT',
    'INVALID_COMMAND',
    'INVALID_REPORT_INPUT',
    'INVALID_SWEEP',
    'JOURNAL_UNREADABLE',
    'QUEUE_CODE_MISMATCH',
    'QUEUE_DATA_MISMATCH',
    'QUEUE_JOB_FAILED',
    'QUEUE_JOB_LOST',
    'QUEUE_JOB_UNSUPPORTED',
    'RECORDING_CACHE_CORRUPT',
    'RECORDING_CACHE_ENCODE',
    'RECORDING_CACHE_WRITE_FAILED',
    'RECORDING_CLOSED',
    'RECORDING_DAMAGED',
    'RECORDING_EXISTS',
    'RECORDING_INVALID',
    'RECORDING_INVALID_HISTORY',
    'RECORDING_INVALID_MANIFEST',
    'RECORDING_INVALID_OPTIONS',
    'RECORDING_INVALID_SOURCE',
    'RECORDING_NOT_FOUND',
    'RECORDING_UNREADABLE',
    'RECORDING_UNSUPPORTED_VERSION',
    'REPORT_CHART_LIBRARY',
    'ROBUSTNESS_NO_RUN',
    'SWEEP_CELL_FAILED',
    'SWEEP_START_FAILED',
    'SWEEP_WORKER_EXITED',
    'SWEEP_WORKER_FAILED',
  ],
  /** The commands. */
  cli: [
    'ADMIN_TOKEN_REQUIRED',
    'BOT_START_ABORTED',
    'CA_FILE_INVALID',
    'CONNECT_TIMEOUT',
    'DASHBOARD_BUNDLE_FAILED',
    'DASHBOARD_NOT_BUILT',
    'DASHBOARD_TOKEN_FILE_INVALID',
    'DASHBOARD_TOKEN_FILE_MODE',
    'INVALID_ARGUMENT',
    'INVALID_CONFIG',
    'KEY_FILE_EXISTS',
    'KEY_FILE_INVALID',
    'KEY_IMPORT_INVALID',
    'KILL_SWITCH_DISABLED',
    'METRICS_LISTEN_FAILED',
    'RECORDING_WRITE_FAILED',
    'SCAFFOLD_EXISTS',
    'SCAFFOLD_INVALID_NAME',
    'STATUS_UNAVAILABLE',
    'SWEEP_CELLS_FAILED',
  ],
} as const;

export type LocalErrorCode = (typeof LOCAL_ERROR_CODES)[keyof typeof LOCAL_ERROR_CODES][number];

/** Codes of errors from Node and libraries that the project branches on (not raised by it). */
export const FOREIGN_ERROR_CODES = [
  'CSV_MAX_RECORD_SIZE',
  'ECONNRESET',
  'EEXIST',
  'ENOENT',
  'EPERM',
  'ERR_HTTP_REQUEST_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_UNKNOWN_FILE_EXTENSION',
  'HPE_HEADER_OVERFLOW',
  'SQLITE_BUSY',
  'Z_BUF_ERROR',
  'Z_DATA_ERROR',
] as const;

const local: ReadonlySet<string> = new Set(Object.values(LOCAL_ERROR_CODES).flat());

export function isLocalErrorCode(code: string): code is LocalErrorCode {
  return local.has(code);
}
