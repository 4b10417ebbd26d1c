/**
 * Module boundaries (see docs/architecture.md):
 * - core and protocol import nothing else of the project;
 * - signing builds on core and protocol only;
 * - client builds on core, protocol and signing;
 * - emulator never imports client, runtime, replay or cli;
 * - replay reaches the emulator only through its public entry, src/emulator/index.ts (the engine
 *   and the service core the HTTP server also uses, never the server's or engine's files);
 * - runtime reaches the venue only through its venue interface, never the emulator directly;
 *   only src/runtime/live (the adapter behind that interface) imports the client;
 * - strategies see only the package's public API (paperbot/strategy and paperbot/testing).
 */
module.exports = {
  forbidden: [
    {
      name: 'core-is-a-leaf',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^(src/(?!core/)|strategies/)' },
    },
    {
      name: 'protocol-is-a-leaf',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^(src/(?!protocol/)|strategies/)' },
    },
    {
      name: 'signing-uses-core-and-protocol-only',
      severity: 'error',
      from: { path: '^src/signing/' },
      to: { path: '^src/(client|emulator|runtime|replay|cli)/' },
    },
    {
      name: 'client-does-not-know-the-emulator-or-runtime',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/(emulator|runtime|replay|cli)/' },
    },
    {
      name: 'emulator-stands-alone',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: { path: '^src/(client|runtime|replay|cli)/' },
    },
    {
      name: 'replay-reaches-the-emulator-through-its-public-entry',
      severity: 'error',
      from: { path: '^src/replay/' },
      to: { path: '^src/emulator/(?!index\\.ts$)' },
    },
    {
      name: 'runtime-reaches-venues-through-an-interface',
      severity: 'error',
      from: { path: '^src/runtime/' },
      to: { path: '^src/(emulator|replay|cli)/' },
    },
    {
      name: 'runtime-reaches-the-client-only-through-the-live-venue',
      severity: 'error',
      from: { path: '^src/runtime/(?!live/)' },
      to: { path: '^src/client/' },
    },
    {
      name: 'strategies-use-the-package-api',
      severity: 'error',
      from: { path: '^strategies/' },
      to: { path: '^src/', pathNot: '^src/runtime/(strategy|testing)/index\\.ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['paperbot-source', 'import', 'require', 'node', 'default'],
    },
  },
};
