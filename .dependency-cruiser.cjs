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
 * - strategies see only the package's public API (paperbot/strategy and paperbot/testing);
 * - inside runtime, a folder imports only folders on floors below its own (RUNTIME_FLOORS, see
 *   src/runtime/README.md): no arrow upward, none between folders of one floor.
 */

/**
 * src/runtime's floors, lowest first. Floor 0 is runtime's own files (`venue.ts`, `intents.ts`,
 * the serializer...), which import no runtime folder; `config.ts`, which gathers the parts'
 * settings, sits on the top floor with the kernel.
 */
const RUNTIME_FLOORS = [
  ['streams', 'risk'],
  ['exits'],
  ['journal'],
  ['execution'],
  ['deadman', 'strategy'],
  ['live', 'testing'],
  ['kernel'],
];

const runtimeFloorRules = [
  {
    name: 'runtime-floor-0-files-import-no-runtime-folder',
    severity: 'error',
    from: { path: '^src/runtime/[^/]+\\.ts$', pathNot: '^src/runtime/config\\.ts$' },
    to: { path: '^src/runtime/([^/]+/|config\\.ts$)' },
  },
  ...RUNTIME_FLOORS.slice(0, -1).map((floor, index) => {
    const above = RUNTIME_FLOORS.slice(index + 1).flat();
    return {
      name: `runtime-floor-${index + 1}-${floor.join('-')}-imports-no-higher-floor`,
      severity: 'error',
      from: { path: `^src/runtime/(${floor.join('|')})/` },
      to: {
        path: `^src/runtime/((${[...floor, ...above].join('|')})/|config\\.ts$)`,
        // Within its own folder, anything goes; a sibling of the same floor is forbidden.
        pathNot: '^src/runtime/$1/',
      },
    };
  }),
];

module.exports = {
  forbidden: [
    ...runtimeFloorRules,
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
