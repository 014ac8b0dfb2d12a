import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isProseLine, splitCode } from '../server/search/code-text.ts';
import { analyzeQuery } from '../server/search/query.ts';

const pasted = `import Fastify from 'fastify'
const app = Fastify({ logger: true })

app.get('/orders/:id', async (req, reply) => {
  const order = await db.orders.find(req.params.id)
  return order
})

This runs behind nginx and request.ip is always 127.0.0.1. How do I get the real client address?`;

test('a sentence is prose; code lines are not, also when they hold words', () => {
  for (const line of [
    'How do I get the real client address?',
    'Why is app.db undefined inside invoiceRoutes, and how do I fix it?',
    'This runs behind nginx and request.ip is always 127.0.0.1.',
  ]) {
    assert.equal(isProseLine(line), true, line);
  }
  for (const line of [
    'const app = Fastify({ logger: true })',
    "app.get('/orders/:id', async (req, reply) => {",
    '// plugins/db.js',
    '  return order',
    '})',
    "@Controller('me')",
    "level: process.env.LOG_LEVEL ?? 'info',",
    '<Table rows={data.items} page={page} />',
  ]) {
    assert.equal(isProseLine(line), false, line);
  }
});

test('pasted code: the sentences that ask come first, the code without its keywords after', () => {
  const split = splitCode(pasted)!;
  assert.equal(split.prose, 'This runs behind nginx and request.ip is always 127.0.0.1. How do I get the real client address?');
  assert.doesNotMatch(split.code, /\b(const|await|return|import|from|true)\b/);
  assert.match(split.code, /app\.get\('\/orders\/:id', \(req, reply\) => \{/);
  // Under three code lines, or no sentence: not a paste of code.
  assert.equal(splitCode('How do I use c.set()?\nconst x = c.get("user")'), null);
  assert.equal(splitCode('const a = 1\nconst b = 2\nconst c = a + b'), null);
});

test('analyzeQuery: the asking sentences lead the terms and alone are embedded; the asked terms leave the code out', () => {
  const q = analyzeQuery(pasted);
  assert.equal(q.searchText, 'This runs behind nginx and request.ip is always 127.0.0.1. How do I get the real client address?');
  assert.deepEqual(q.terms.slice(0, 4), ['runs', 'behind', 'nginx', 'requestip']);
  assert.ok(q.terms.includes('orders') && !q.askedTerms.includes('orders'));
  assert.ok(q.askedTerms.includes('client') && q.askedTerms.includes('nginx'));
  // A question without code: its terms are all asked.
  const plain = analyzeQuery('How do I get the real client address behind nginx?');
  assert.deepEqual(plain.askedTerms, plain.terms);
});
