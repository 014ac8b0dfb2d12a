// docker-compose.yml, parsed: the default service stays the one box on SQLite; the profile `cluster`
// is PostgreSQL with pgvector (pinned), two Stacks nodes that agree on their settings and share
// nothing but the database, and nginx sharing requests between them round robin.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { load } from 'js-yaml';
import { loadConfig } from '../server/config.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

interface Service {
  profiles?: string[];
  image?: string;
  build?: string;
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
}

const compose = load(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const { services } = compose;

/** What compose makes of `${NAME:-default}` with NAME unset. */
const interpolated = (env: Record<string, string> = {}) =>
  Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1')]));

/** The named volumes a service mounts. */
const namedVolumes = (s: Service) => (s.volumes ?? []).map((v) => v.split(':')[0]!).filter((v) => !v.startsWith('.') && !v.startsWith('/'));

test('the default profile is the one box on SQLite, as before', () => {
  const box = services.stacks!;
  assert.equal(box.profiles, undefined, 'started by a plain `docker compose up`');
  assert.deepEqual([box.image, box.ports, namedVolumes(box)], ['stacks:latest', ['3000:3000'], ['stacks-data']]);
  assert.equal(loadConfig({}, interpolated(box.environment)).databaseUrl, undefined);
  for (const [name, s] of Object.entries(services)) if (name !== 'stacks') assert.deepEqual(s.profiles, ['cluster'], `${name} only in the cluster profile`);
});

test('the cluster: PostgreSQL with pgvector pinned, two nodes alike on it sharing nothing else, nginx round robin in front', () => {
  const db = services.postgres!;
  const [, major] = /^pgvector\/pgvector:\d+\.\d+\.\d+-pg(\d+)(-\w+)?$/.exec(db.image ?? '') ?? [];
  assert.ok(major && Number(major) >= 15, `${db.image}: pgvector on PostgreSQL 15 or newer, pinned by version`);
  const dbEnv = interpolated(db.environment);

  const [a, b] = [services['node-a']!, services['node-b']!];
  assert.deepEqual(a.environment, b.environment, "the nodes' settings agree");
  for (const node of [a, b]) {
    assert.deepEqual([node.image, node.build, node.depends_on?.postgres], ['stacks:latest', '.', { condition: 'service_healthy' }]);
    assert.equal(node.ports, undefined, 'reached through the balancer only');
  }
  // the second node starts once the first serves, so that a fresh instance's first start happens once
  assert.deepEqual([Object.keys(a.depends_on ?? {}), b.depends_on?.['node-a']], [['postgres'], { condition: 'service_healthy' }]);
  // each node's own volume (staged uploads, caches), none shared with the other or the one box
  const volumes = [namedVolumes(a), namedVolumes(b), namedVolumes(services.stacks!), namedVolumes(db)].map((v) => v.join());
  assert.deepEqual(volumes, ['stacks-node-a', 'stacks-node-b', 'stacks-data', 'stacks-pg']);
  for (const v of volumes) assert.ok(v in compose.volumes, `volume ${v} declared`);

  // The nodes' settings are valid for Stacks (an unknown STACKS_ variable would stop it) and name the database service as it is set up.
  const config = loadConfig({}, interpolated(a.environment));
  const url = new URL(config.databaseUrl ?? '');
  assert.deepEqual(
    [url.hostname, url.port, url.username, decodeURIComponent(url.password), url.pathname],
    ['postgres', '5432', dbEnv.POSTGRES_USER, dbEnv.POSTGRES_PASSWORD, `/${dbEnv.POSTGRES_DB}`],
  );
  assert.equal(config.trustProxy, 'uniquelocal', "the balancer's X-Forwarded-For is believed");

  const lb = services.lb!;
  assert.deepEqual(Object.keys(lb.depends_on ?? {}).sort(), ['node-a', 'node-b']);
  assert.match(lb.image ?? '', /^nginx:\d+\.\d+\.\d+-alpine$/);
  const mount = (lb.volumes ?? []).find((v) => v.includes('/etc/nginx/conf.d/'));
  const conf = fs.readFileSync(path.join(ROOT, mount!.split(':')[0]!), 'utf8').replace(/#.*$/gm, '');
  const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(conf);
  assert.ok(upstream, 'an upstream block');
  assert.deepEqual(
    [...upstream[2]!.matchAll(/server\s+([\w.-]+:\d+)/g)].map((m) => m[1]),
    ['node-a:3000', 'node-b:3000'],
  );
  assert.doesNotMatch(upstream[2]!, /\b(ip_hash|hash|least_conn|random)\b/, 'round robin: no other balancing method');
  assert.match(conf, new RegExp(`proxy_pass\\s+http://${upstream[1]};`));
  assert.match(conf, /proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;/, "the caller's address passed on");
  // the port in the upstream is the one the image serves on
  assert.match(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'), /^EXPOSE 3000$/m);
});
