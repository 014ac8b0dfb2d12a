/**
 * Evaluation questions over the real corpora in test/fixtures/corpus/bundles. `expect` lists the
 * source URLs (codeId / pageId, with the `~N` suffix of repeated anchors ignored) that answer the
 * question; an entry ending in `*` matches every anchor of that page. `paraphrase` marks questions
 * worded to share few words with their answers (they test the vector side).
 */
export interface EvalQuestion {
  libraryId: string;
  question: string;
  expect: string[];
  paraphrase?: boolean;
  /** Written after the ranking constants were chosen, to check they generalize (reported separately). */
  heldOut?: boolean;
}

const F = 'https://fastify.dev/docs/latest/';
const F4 = 'https://github.com/fastify/fastify/blob/v4.29.1/docs/';
const F3 = 'https://github.com/fastify/fastify/blob/v3.29.5/docs/';
const V = 'https://vite.dev/';
const H = 'https://hono.dev/docs/';
const P = 'https://github.com/pinojs/pino/blob/main/docs/';
const Z = 'https://zod.dev/';

const fastify = '/fastify/fastify';
const vite = '/vitejs/vite';
const hono = '/honojs/website';
const pino = '/pinojs/pino';
const zod = '/colinhacks/zod';

export const QUESTIONS: EvalQuestion[] = [
  // fastify (current)
  {
    libraryId: fastify,
    question: 'How do I register a plugin with fastify.register?',
    expect: [`${F}Reference/Server/#register`, `${F}Reference/Plugins/*`, `${F}Guides/Plugins-Guide/#register`],
  },
  {
    libraryId: fastify,
    question: 'setErrorHandler custom error handler',
    expect: [`${F}Reference/Server/#seterrorhandler`, `${F}Reference/Errors/#errors-in-fastify-lifecycle-hooks-and-a-custom-error-handler`],
  },
  { libraryId: fastify, question: 'onRequest hook example', expect: [`${F}Reference/Hooks/#onrequest`] },
  { libraryId: fastify, question: 'How to set the bodyLimit option', expect: [`${F}Reference/Server/#bodylimit`] },
  {
    libraryId: fastify,
    question: 'test routes with fastify.inject',
    expect: [`${F}Reference/Server/#inject`, `${F}Guides/Testing/#testing-with-http-injection`],
  },
  {
    libraryId: fastify,
    question: 'addContentTypeParser for a custom content type',
    expect: [`${F}Reference/Server/#addcontenttypeparser`, `${F}Reference/ContentTypeParser/*`],
  },
  { libraryId: fastify, question: 'decorateRequest example', expect: [`${F}Reference/Decorators/#decoraterequestname-value-dependencies`] },
  {
    libraryId: fastify,
    question: 'route prefix for all routes registered in a plugin',
    expect: [`${F}Reference/Routes/#route-prefixing`, `${F}Reference/Server/#prefix`],
  },
  {
    libraryId: fastify,
    question: 'genReqId custom request id generation',
    expect: [`${F}Reference/Server/#genreqid`, `${F}Reference/Server/#requestidheader`],
  },
  {
    libraryId: fastify,
    question: 'validate the request body with a JSON schema',
    expect: [`${F}Reference/Validation-and-Serialization/*`, `${F}Guides/Getting-Started/#validate-your-data`],
  },
  { libraryId: fastify, question: 'TypeBox type provider', expect: [`${F}Reference/Type-Providers/*`, `${F}Reference/TypeScript/#typebox`] },
  { libraryId: fastify, question: 'reply.redirect signature change in v5', expect: [`${F}Guides/Migration-Guide-V5/#replyredirect-has-a-new-signature`] },
  { libraryId: fastify, question: 'request.connection removed', expect: [`${F}Guides/Migration-Guide-V5/#removed-requestconnection`] },
  { libraryId: fastify, question: 'run fastify on AWS Lambda', expect: [`${F}Guides/Serverless/#using-fastifyaws-lambda`, `${F}Guides/Serverless/#lambdajs`] },
  { libraryId: fastify, question: 'fastify.close shutdown lifecycle', expect: [`${F}Reference/Server/#shutdown-lifecycle`, `${F}Reference/Server/#close`] },
  { libraryId: fastify, question: 'printRoutes output', expect: [`${F}Reference/Server/#printroutes`] },
  {
    libraryId: fastify,
    question: 'My server should refuse uploads that are too big: where do I configure the maximum payload?',
    expect: [`${F}Reference/Server/#bodylimit`],
    paraphrase: true,
  },
  {
    libraryId: fastify,
    question: 'Where do I put logic that must run before each incoming call reaches its handler?',
    expect: [`${F}Reference/Hooks/*`],
    paraphrase: true,
  },
  {
    libraryId: fastify,
    question: 'Can I simulate a call in unit tests without opening a port?',
    expect: [`${F}Reference/Server/#inject`, `${F}Guides/Testing/*`],
    paraphrase: true,
  },
  { libraryId: fastify, question: 'Attach a helper property to every incoming req object', expect: [`${F}Reference/Decorators/*`], paraphrase: true },
  {
    libraryId: fastify,
    question: 'Wait until the database connection is up before accepting traffic',
    expect: [`${F}Guides/Delay-Accepting-Requests/*`],
    paraphrase: true,
  },
  {
    libraryId: fastify,
    question: 'Notice when a client hangs up before the response is finished',
    expect: [`${F}Guides/Detecting-When-Clients-Abort/*`],
    paraphrase: true,
  },
  {
    libraryId: fastify,
    question: 'Is parsing untrusted JSON dangerous because of object prototype tricks?',
    expect: [`${F}Guides/Prototype-Poisoning/*`, `${F}Reference/Server/#onprotopoisoning`, `${F}Reference/Server/#onconstructorpoisoning`],
    paraphrase: true,
  },

  // fastify, older versions
  {
    libraryId: `${fastify}/v4.29.1`,
    question: 'How do I enable logging?',
    expect: [`${F4}Reference/Logging.md#enable-logging`, `${F4}Reference/Logging.md#usage`],
  },
  { libraryId: `${fastify}@v4.29.1`, question: 'reply.redirect with a status code', expect: [`${F4}Reference/Reply.md#redirectdest-code-`] },
  { libraryId: `${fastify}@v3.29.5`, question: 'Use Express middleware', expect: [`${F3}Reference/Middleware.md*`] },
  { libraryId: `${fastify}/v3.29.5`, question: 'reply.redirect', expect: [`${F3}Reference/Reply.md#redirectcode--dest`] },

  // vite
  { libraryId: vite, question: 'server.port option', expect: [`${V}config/server-options#server-port`] },
  { libraryId: vite, question: 'configure server.proxy for API requests', expect: [`${V}config/server-options#server-proxy`] },
  { libraryId: vite, question: 'resolve.alias configuration', expect: [`${V}config/shared-options#resolve-alias`] },
  { libraryId: vite, question: 'build a library with build.lib', expect: [`${V}config/build-options#build-lib`, `${V}guide/build#library-mode`] },
  {
    libraryId: vite,
    question: 'import.meta.glob usage',
    expect: [`${V}guide/features#glob-import`, `${V}guide/features#named-imports`, `${V}guide/features#custom-queries`],
  },
  { libraryId: vite, question: 'VITE_ prefix for env variables', expect: [`${V}guide/env-and-mode*`, `${V}config/shared-options#envprefix`] },
  { libraryId: vite, question: 'CSS modules', expect: [`${V}guide/features#css-modules`] },
  { libraryId: vite, question: 'configureServer plugin hook', expect: [`${V}guide/api-plugin#configureserver`] },
  { libraryId: vite, question: 'createServer JavaScript API', expect: [`${V}guide/api-javascript#createserver`] },
  { libraryId: vite, question: 'chunking strategy manualChunks', expect: [`${V}guide/build#chunking-strategy`] },
  { libraryId: vite, question: 'hot.dispose HMR API', expect: [`${V}guide/api-hmr#hot-dispose-cb`] },
  {
    libraryId: vite,
    question: 'How can I make short import paths like @/components point at my src folder?',
    expect: [`${V}config/shared-options#resolve-alias`],
    paraphrase: true,
  },
  {
    libraryId: vite,
    question: 'Which values from my secrets file end up visible in the browser bundle?',
    expect: [`${V}guide/env-and-mode*`],
    paraphrase: true,
  },
  {
    libraryId: vite,
    question: 'The dev server dies on Linux because the system ran out of file watchers',
    expect: [`${V}guide/troubleshooting#vite-crashes-with-enospc-error`],
    paraphrase: true,
  },
  {
    libraryId: vite,
    question: 'Files saved in my editor are not picked up and the page does not refresh',
    expect: [`${V}guide/troubleshooting#vite-does-not-detect-a-file-change`, `${V}guide/troubleshooting#a-full-reload-happens-instead-of-hmr`],
    paraphrase: true,
  },
  {
    libraryId: vite,
    question: 'Host the app under a sub-path like /my-app/ instead of the domain root',
    expect: [`${V}guide/build#public-base-path`, `${V}config/shared-options#base`, `${V}guide/build#advanced-base-options`],
    paraphrase: true,
  },
  {
    libraryId: vite,
    question: 'Why are packages from node_modules converted ahead of time before serving?',
    expect: [`${V}guide/dep-pre-bundling*`, `${V}guide/features#npm-dependency-resolving-and-pre-bundling`],
    paraphrase: true,
  },

  // hono
  { libraryId: hono, question: 'read query parameters c.req.query', expect: [`${H}api/request#query`, `${H}api/request#queries`] },
  { libraryId: hono, question: 'c.json response', expect: [`${H}api/context#json`, `${H}getting-started/basic#return-json`] },
  { libraryId: hono, question: 'throw HTTPException', expect: [`${H}api/exception*`] },
  { libraryId: hono, question: 'app.onError error handling', expect: [`${H}api/hono#error-handling`] },
  { libraryId: hono, question: 'path parameters in routes', expect: [`${H}api/routing#path-parameter`, `${H}api/request#param`] },
  { libraryId: hono, question: 'CORS middleware', expect: [`${H}middleware/builtin/cors*`] },
  { libraryId: hono, question: 'JWT auth middleware', expect: [`${H}middleware/builtin/jwt*`, `${H}helpers/jwt*`] },
  { libraryId: hono, question: 'RPC client hc', expect: [`${H}guides/rpc*`, `${H}concepts/stacks*`] },
  {
    libraryId: hono,
    question: 'parseBody multipart form data',
    expect: [`${H}api/request#parsebody`, `${H}api/request#multiple-files`, `${H}api/request#dot-notation`],
  },
  { libraryId: hono, question: 'app.basePath', expect: [`${H}api/routing#base-path`] },
  { libraryId: hono, question: 'serve static files with Bun', expect: [`${H}getting-started/bun#serve-static-files`] },
  { libraryId: hono, question: 'Cloudflare Workers bindings', expect: [`${H}getting-started/cloudflare-workers#bindings`] },
  { libraryId: hono, question: 'Return structured data to the client as a serialized object', expect: [`${H}api/context#json`], paraphrase: true },
  {
    libraryId: hono,
    question: 'Which matching engine is quickest and how does it pick a handler for a path?',
    expect: [`${H}concepts/routers*`],
    paraphrase: true,
  },
  {
    libraryId: hono,
    question: 'Read secrets configured for my edge deployment inside a handler',
    expect: [`${H}getting-started/cloudflare-workers#bindings`, `${H}api/context#env`, `${H}getting-started/cloudflare-pages#bindings`],
    paraphrase: true,
  },
  {
    libraryId: hono,
    question: 'Share server endpoint types with the frontend so calls are checked at compile time',
    expect: [`${H}concepts/stacks*`, `${H}guides/rpc*`],
    paraphrase: true,
  },

  // pino
  { libraryId: pino, question: 'redact sensitive fields', expect: [`${P}api.md#redact-array--object`, `${P}redaction.md*`] },
  { libraryId: pino, question: 'logger.child with bindings', expect: [`${P}api.md#loggerchildbindings-options--logger`, `${P}child-loggers.md*`] },
  {
    libraryId: pino,
    question: 'transport with multiple targets',
    expect: [`${P}transports.md#b-targets-multiple-destinations`, `${P}api.md#pinotransportoptions--threadstream`],
  },
  { libraryId: pino, question: 'pino-pretty', expect: [`${P}pretty.md*`] },
  { libraryId: pino, question: 'customLevels option', expect: [`${P}api.md#customlevels-object`] },
  { libraryId: pino, question: 'timestamp option format', expect: [`${P}api.md#timestamp-boolean--function`, `${P}api.md#pinostdtimefunctions-object`] },
  {
    libraryId: pino,
    question: 'formatters level',
    expect: [`${P}api.md#formatters-object`, `${P}api.md#level`, `${P}help.md#log-levels-as-labels-instead-of-numbers`],
  },
  { libraryId: pino, question: 'pino with fastify', expect: [`${P}web.md#pino-with-fastify`] },
  { libraryId: pino, question: 'reopening log files for logrotate', expect: [`${P}help.md#reopening-log-files`] },
  {
    libraryId: pino,
    question: 'Hide passwords and tokens so they never show up in the output',
    expect: [`${P}api.md#redact-array--object`, `${P}redaction.md*`],
    paraphrase: true,
  },
  {
    libraryId: pino,
    question: 'Show words like info or error instead of 30 or 50 on each line',
    expect: [`${P}help.md#log-levels-as-labels-instead-of-numbers`, `${P}api.md#formatters-object`, `${P}api.md#level`],
    paraphrase: true,
  },
  {
    libraryId: pino,
    question: 'Send output to a file and to the terminal at the same time',
    expect: [
      `${P}transports.md#b-targets-multiple-destinations`,
      `${P}help.md#log-to-different-streams`,
      `${P}api.md#pinomultistreamstreamsarray-opts--multistreamres`,
    ],
    paraphrase: true,
  },
  { libraryId: pino, question: 'Will the last messages be lost if the process exits suddenly?', expect: [`${P}asynchronous.md*`], paraphrase: true },

  // zod
  { libraryId: zod, question: 'discriminated union', expect: [`${Z}api#discriminated-unions`] },
  { libraryId: zod, question: 'z.infer TypeScript type', expect: [`${Z}basics#inferring-types`] },
  { libraryId: zod, question: 'safeParse result', expect: [`${Z}basics#parsing-data`, `${Z}basics#handling-errors`] },
  { libraryId: zod, question: 'refine custom validation', expect: [`${Z}api#refine`, `${Z}api#refinements`] },
  { libraryId: zod, question: 'transform values after parsing', expect: [`${Z}api#transforms`, `${Z}api#transform`] },
  { libraryId: zod, question: 'z.coerce', expect: [`${Z}api#coercion`] },
  { libraryId: zod, question: 'partial make all properties optional', expect: [`${Z}api#partial`] },
  { libraryId: zod, question: 'z.toJSONSchema', expect: [`${Z}json-schema*`] },
  { libraryId: zod, question: 'customize error messages', expect: [`${Z}error-customization*`] },
  { libraryId: zod, question: 'z.enum', expect: [`${Z}api#enums`] },
  { libraryId: zod, question: 'Zod Mini', expect: [`${Z}packages/mini*`] },
  { libraryId: zod, question: 'email string format', expect: [`${Z}api#emails`, `${Z}api#string-formats`, `${Z}v4/#top-level-string-formats`] },
  {
    libraryId: zod,
    question: 'A field holds one of several object shapes depending on a tag property',
    expect: [`${Z}api#discriminated-unions`, `${Z}api#unions`],
    paraphrase: true,
  },
  {
    libraryId: zod,
    question: 'Turn the text "42" from a query string into a number while checking it',
    expect: [`${Z}api#coercion`, `${Z}codecs#stringtonumber`],
    paraphrase: true,
  },
  {
    libraryId: zod,
    question: 'Get a static type from my validator instead of writing an interface by hand',
    expect: [`${Z}basics#inferring-types`],
    paraphrase: true,
  },
  { libraryId: zod, question: 'Export my validators in a format that OpenAPI tooling understands', expect: [`${Z}json-schema*`], paraphrase: true },
  {
    libraryId: zod,
    question: 'Show validation messages in German',
    expect: [`${Z}error-customization#internationalization`, `${Z}error-customization#locales`],
    paraphrase: true,
  },

  // Held out: written after the constants above were tuned on the questions before this line.
  { libraryId: fastify, question: 'reply.code to set the status code', expect: [`${F}Reference/Reply/#codestatuscode`], heldOut: true },
  { libraryId: fastify, question: 'set a response header with reply.header', expect: [`${F}Reference/Reply/#headerkey-value`], heldOut: true },
  { libraryId: fastify, question: 'onSend hook to modify the payload', expect: [`${F}Reference/Hooks/#onsend`], heldOut: true },
  { libraryId: fastify, question: 'trustProxy option behind a load balancer', expect: [`${F}Reference/Server/#trustproxy`], heldOut: true },
  {
    libraryId: fastify,
    question: 'Serve different handlers for the same URL depending on the Host or version header',
    expect: [`${F}Reference/Routes/#constraints`, `${F}Reference/Routes/#host-constraints`, `${F}Reference/Routes/#version-constraints`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: fastify,
    question: 'Turn on output of what the server is doing to the console',
    expect: [`${F}Reference/Logging/*`, `${F}Reference/Server/#logger`],
    paraphrase: true,
    heldOut: true,
  },
  { libraryId: vite, question: 'build.outDir output directory', expect: [`${V}config/build-options#build-outdir`], heldOut: true },
  { libraryId: vite, question: 'generate source maps for the production build', expect: [`${V}config/build-options#build-sourcemap`], heldOut: true },
  { libraryId: vite, question: 'define global constant replacements', expect: [`${V}config/shared-options#define`], heldOut: true },
  {
    libraryId: vite,
    question: 'Where do I put files like robots.txt that must be copied as-is without processing?',
    expect: [`${V}guide/assets#the-public-directory`, `${V}config/shared-options#publicdir`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: vite,
    question: 'Run the local dev server over TLS with a certificate',
    expect: [`${V}config/server-options#server-https`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: vite,
    question: 'Use a staging configuration separate from production and development',
    expect: [`${V}guide/env-and-mode#modes`, `${V}guide/env-and-mode*`],
    paraphrase: true,
    heldOut: true,
  },
  { libraryId: hono, question: 'basic auth middleware', expect: [`${H}middleware/builtin/basic-auth*`], heldOut: true },
  { libraryId: hono, question: 'c.set and c.get variables', expect: [`${H}api/context#set-get`, `${H}api/context#var`], heldOut: true },
  { libraryId: hono, question: 'custom 404 handler app.notFound', expect: [`${H}api/hono#not-found`], heldOut: true },
  {
    libraryId: hono,
    question: 'Protect a few routes with a username and password prompt',
    expect: [`${H}middleware/builtin/basic-auth*`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: hono,
    question: 'Send the response piece by piece as it is produced instead of all at once',
    expect: [`${H}helpers/streaming*`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: hono,
    question: 'Check my endpoints in unit tests without starting a real server',
    expect: [`${H}guides/testing*`, `${H}helpers/testing*`],
    paraphrase: true,
    heldOut: true,
  },
  { libraryId: pino, question: 'mixin function to add fields', expect: [`${P}api.md#mixin-function`], heldOut: true },
  {
    libraryId: pino,
    question: 'custom serializers for req and err',
    expect: [`${P}api.md#serializers-object`, `${P}api.md#pinostdserializers-object`],
    heldOut: true,
  },
  {
    libraryId: pino,
    question: 'Change how chatty the output is while the app runs',
    expect: [`${P}api.md#loggerlevel-string-gettersetter`, `${P}api.md#level-string`],
    paraphrase: true,
    heldOut: true,
  },
  { libraryId: pino, question: 'Can I use it in front-end code that runs in Chrome?', expect: [`${P}browser.md*`], paraphrase: true, heldOut: true },
  { libraryId: zod, question: 'optional fields', expect: [`${Z}api#optionals`], heldOut: true },
  { libraryId: zod, question: 'default values', expect: [`${Z}api#defaults`], heldOut: true },
  { libraryId: zod, question: 'record schema with string keys', expect: [`${Z}api#records`], heldOut: true },
  {
    libraryId: zod,
    question: 'Mark a string as a UserId so plain strings cannot be passed by mistake',
    expect: [`${Z}api#branded-types`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: zod,
    question: 'A category that contains subcategories of the same shape, nested arbitrarily deep',
    expect: [`${Z}api#recursive-objects`],
    paraphrase: true,
    heldOut: true,
  },
  {
    libraryId: zod,
    question: 'Turn a failed check into a nested object I can show next to form fields',
    expect: [`${Z}error-formatting*`],
    paraphrase: true,
    heldOut: true,
  },
];
