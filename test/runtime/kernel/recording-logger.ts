/** A logger that keeps every line, for tests that check what was logged. */
import type { LogFields, Logger } from '../../../src/core/logger.ts';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

export class RecordingLogger implements Logger {
  constructor(readonly lines: LogLine[] = []) {}

  debug(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'debug', message, fields: { ...fields } });
  }

  info(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'info', message, fields: { ...fields } });
  }

  warn(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'warn', message, fields: { ...fields } });
  }

  error(message: string, fields?: LogFields): void {
    this.lines.push({ level: 'error', message, fields: { ...fields } });
  }

  at(level: LogLine['level']): LogLine[] {
    return this.lines.filter((line) => line.level === level);
  }
}
