/**
 * What `paperbot doctor` reports: ordered checks, each with a verdict and one line of advice,
 * rendered as text for people or as JSON for scripts. `skip` marks a check that could not run
 * because an earlier one failed (its advice names that check).
 */
export type Verdict = 'ok' | 'warn' | 'fail' | 'skip';

export interface CheckResult {
  readonly id: string;
  readonly verdict: Verdict;
  /** What was found, one line. */
  readonly summary: string;
  /** What to do, one line; null when there is nothing to do. */
  readonly advice: string | null;
  /** Further lines shown under the check (the signing input sent, per-market results). */
  readonly lines?: readonly string[];
  /** Machine-readable facts for `--json`. */
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface DoctorTarget {
  readonly restUrl: string | null;
  readonly wsUrl: string | null;
  readonly keyId: string | null;
  readonly accountId: string | null;
}

export interface DoctorReport {
  /** True when the bot could trade: no check failed. */
  readonly ok: boolean;
  readonly target: DoctorTarget;
  readonly checks: readonly CheckResult[];
}

export function reportOf(target: DoctorTarget, checks: readonly CheckResult[]): DoctorReport {
  return { ok: checks.every((check) => check.verdict !== 'fail'), target, checks };
}

const LABEL: Readonly<Record<Verdict, string>> = {
  ok: 'ok  ',
  warn: 'warn',
  fail: 'FAIL',
  skip: 'skip',
};

export function renderText(report: DoctorReport): string {
  const width = Math.max(...report.checks.map((check) => check.id.length), 8);
  const pad = ' '.repeat(width + 9);
  const out: string[] = [];
  const { target } = report;
  out.push(
    `paperbot doctor: ${target.restUrl ?? '(no URL)'}${target.keyId === null ? '' : ` with key ${target.keyId}`}${target.accountId === null ? '' : ` (account ${target.accountId})`}`,
  );
  for (const check of report.checks) {
    if (check.verdict === 'skip') {
      out.push(
        `  ${LABEL.skip}  ${check.id.padEnd(width)} ${check.summary}: ${check.advice ?? ''}`,
      );
      continue;
    }
    out.push(`  ${LABEL[check.verdict]}  ${check.id.padEnd(width)} ${check.summary}`);
    for (const line of check.lines ?? []) out.push(`${pad}${line}`);
    if (check.advice !== null && check.verdict !== 'ok') out.push(`${pad}-> ${check.advice}`);
  }
  const failed = report.checks.filter((check) => check.verdict === 'fail').length;
  const warned = report.checks.filter((check) => check.verdict === 'warn').length;
  out.push(
    report.ok
      ? `paperbot doctor: the bot can trade (${warned} warning${warned === 1 ? '' : 's'})`
      : `paperbot doctor: the bot cannot trade (${failed} failed, ${warned} warning${warned === 1 ? '' : 's'})`,
  );
  return `${out.join('\n')}\n`;
}

export function renderJson(report: DoctorReport): string {
  return `${JSON.stringify(
    {
      ok: report.ok,
      target: {
        rest_url: report.target.restUrl,
        ws_url: report.target.wsUrl,
        key_id: report.target.keyId,
        account_id: report.target.accountId,
      },
      checks: report.checks.map((check) => ({
        id: check.id,
        verdict: check.verdict,
        summary: check.summary,
        advice: check.advice,
        lines: check.lines ?? [],
        details: check.details ?? {},
      })),
    },
    null,
    2,
  )}\n`;
}
