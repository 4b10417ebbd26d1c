/** Recording sessions: the recorder, its sources, and in-process emulator sessions. */
export * from './emulator-session.ts';
export * from './recorder.ts';
export * from './sources.ts';
