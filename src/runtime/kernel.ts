/** The kernel's public surface; the code lives in `./kernel/`. */
export * from './kernel/index.ts';
