/** A kernel logger that keeps every line, for tests that check what was logged. */
import type { KernelLogger } from '../../../src/runtime/kernel/index.ts';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

export class RecordingLogger implements KernelLogger {
  constructor(
    readonly lines: LogLine[] = [],
    private readonly bindings: Record<string, unknown> = {},
  ) {}

  debug(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'debug', message, fields: { ...this.bindings, ...fields } });
  }

  info(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'info', message, fields: { ...this.bindings, ...fields } });
  }

  warn(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'warn', message, fields: { ...this.bindings, ...fields } });
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.lines.push({ level: 'error', message, fields: { ...this.bindings, ...fields } });
  }

  child(bindings: Record<string, unknown>): KernelLogger {
    return new RecordingLogger(this.lines, { ...this.bindings, ...bindings });
  }

  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((line) => line.level === level);
  }
}
