// The layers of Stacks and the import rules that hold them (docs/architecture.md explains them).
// Run by `npm run lint` through scripts/depcruise.mjs (dependency-cruiser's own CLI needs Node 22;
// its API runs on Node 20). Type-only imports count like any other: a type import is a dependency.
//
//   bin/, cli/, server/server.ts           start a process (launchers)
//   server/services.ts, services-aids.ts   the composition root: builds every service, registers jobs and tasks
//   server/http/, server/mcp/, server/web/ entry points: translate a protocol into service calls
//   server/operations/                     the service layer's front door: every operation validated and admitted, then run
//   server/<feature>/                      services: auth license teams jobs embed ingest search sources backup metrics system audit
//   server/contracts/                      one zod contract per operation (input, access, answer); lib/ only
//   server/store/                          all SQL; imports no service
//   server/config.ts log.ts version.ts     server base: configuration, logging, version
//   lib/                                   shared pure helpers: model types, errors, text, net guard, vector kernel
//   crawler/                               the website crawler, a library: imports lib/ only
const SERVICES = '^server/(auth|license|teams|jobs|embed|ingest|search|sources|backup|metrics|system|audit)/';
const ENTRY = '^server/(http|mcp|web)/';
const ROOT = '^server/(services|services-aids|server)[.]ts$';
const BASE = '^server/(config|log|version)[.]ts$';
const STORE = '^server/store/';
const OPERATIONS = '^server/operations/';
const CONTRACTS = '^server/contracts/';
const REPO = '^(server|cli|crawler|lib|bin|scripts|test|bench)/';

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included: a cycle means two modules are one module, or one of them is in the wrong layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'lib-is-the-bottom',
      severity: 'error',
      comment: 'lib/ holds helpers shared by the crawler, the server and the CLI; it imports nothing else of the repository.',
      from: { path: '^lib/' },
      to: { path: REPO, pathNot: '^lib/' },
    },
    {
      name: 'crawler-is-a-library',
      severity: 'error',
      comment: 'crawler/ is a library that imports only lib/; the website source (server/sources/website/) calls it through the interfaces it declares.',
      from: { path: '^crawler/' },
      to: { path: REPO, pathNot: '^(crawler|lib)/' },
    },
    {
      name: 'base-imports-lib-only',
      severity: 'error',
      comment: 'Configuration, logging and the version sit under the store and the services.',
      from: { path: BASE },
      to: { path: REPO, pathNot: `^lib/|${BASE}` },
    },
    {
      name: 'store-imports-no-service',
      severity: 'error',
      comment: 'server/store/ holds all SQL; it may use lib/ and the server base, never a service, an entry point or the crawler.',
      from: { path: STORE },
      to: { path: REPO, pathNot: `${STORE}|${BASE}|^lib/` },
    },
    {
      name: 'services-do-not-import-upward',
      severity: 'error',
      comment: 'A service receives its dependencies as arguments; it never imports an entry point, the composition root or the CLI.',
      from: { path: SERVICES },
      to: { path: `${ENTRY}|${ROOT}|^(cli|bin)/` },
    },
    {
      name: 'contracts-are-schemas',
      severity: 'error',
      comment: 'A contract describes an operation (its input, who may call it, its answer); it imports only lib/ and other contracts.',
      from: { path: CONTRACTS },
      to: { path: REPO, pathNot: `${CONTRACTS}|^lib/` },
    },
    {
      name: 'services-sit-under-the-operations',
      severity: 'error',
      comment: 'The operations call the services, never the reverse.',
      from: { path: SERVICES },
      to: { path: OPERATIONS },
    },
    {
      name: 'operations-do-not-import-upward-or-sql',
      severity: 'error',
      comment: 'The operations validate, admit and call the services; they import no entry point, no launcher, no SQL.',
      from: { path: OPERATIONS },
      to: { path: `${ENTRY}|${ROOT}|^(cli|bin)/|${STORE}` },
    },
    {
      name: 'job-queue-knows-no-feature',
      severity: 'error',
      comment: 'server/jobs/ runs handlers that the composition root registers; it imports no feature.',
      from: { path: '^server/jobs/' },
      to: { path: '^server/(auth|license|teams|embed|ingest|search|sources)/|^crawler/' },
    },
    {
      name: 'entry-points-do-not-import-upward',
      severity: 'error',
      comment: 'HTTP routes, MCP tools and the web UI get their services as arguments from the composition root; they never import it, the CLI, or SQL.',
      from: { path: ENTRY },
      to: { path: `${ROOT}|^(cli|bin)/|${STORE}` },
    },
    {
      name: 'mcp-is-not-http',
      severity: 'error',
      comment: 'The MCP tools are hosted by HTTP (/mcp) and by the CLI (stdio); they know neither.',
      from: { path: '^server/mcp/' },
      to: { path: '^server/http/' },
    },
    {
      name: 'cli-calls-operations',
      severity: 'error',
      comment:
        'The CLI calls the same operations as REST and MCP (as the local caller): it imports server/operations, server/contracts, lib/, the server base, ' +
        'the composition root (to build the services of a data dir), the launcher (serve) and the MCP tools it hosts over stdio; never a service, SQL or a route.',
      from: { path: '^cli/' },
      to: { path: `${SERVICES}|${STORE}|^server/(http|web|jobs|auth|license|teams)/` },
    },
    {
      name: 'routes-call-operations',
      severity: 'error',
      comment:
        "An HTTP route translates a request into an operation call and the answer back: it imports no store module, nor a service's SQL-backed internals by way of the store.",
      from: { path: '^server/http/routes/' },
      to: { path: STORE },
    },
    {
      name: 'launchers-are-not-imported',
      severity: 'error',
      comment: 'Nothing below the launchers imports them (the CLI entry, bin/, server/server.ts).',
      from: { path: '^(server|crawler|lib)/', pathNot: '^server/server[.]ts$' },
      to: { path: '^(cli|bin)/|^server/server[.]ts$' },
    },
    {
      name: 'product-code-does-not-import-tests-or-benches',
      severity: 'error',
      comment: 'test/ and bench/ import product code, never the other way round.',
      from: { path: '^(server|cli|crawler|lib|bin)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-dev-dependencies-in-product-code',
      severity: 'error',
      comment: 'devDependencies are build, lint and test tools: the product must run without them (type imports excepted).',
      from: { path: '^(server|cli|crawler|lib|bin)/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|data)/|^server/web/public/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
    // Resolve package subpaths through their `exports` (e.g. @modelcontextprotocol/sdk/server/stdio.js).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
