import { test } from 'node:test';
import assert from 'node:assert/strict';
import { questionLanguage } from '../server/search/stopwords.ts';
import { analyzeQuery } from '../server/search/query.ts';

test('a question in another language is told by its function words; English ones never are', () => {
  assert.equal(questionLanguage('Wie erhöhe ich das bodyLimit für große Uploads?'), 'de');
  assert.equal(questionLanguage('Comment configurer server.proxy dans vite.config.ts ?'), 'fr');
  assert.equal(questionLanguage('¿Cómo uso z.discriminatedUnion con varios tipos?'), 'es');
  assert.equal(questionLanguage('Como faço para usar c.set e c.get no middleware?'), 'pt');
  assert.equal(questionLanguage('Come posso aggiungere un middleware con c.set e c.get nella mia app Hono?'), 'it');
  for (const english of [
    'set an alias for @ to src in vite.config.ts',
    'pros and cons of per-route log levels in fastify',
    'How do I register a plugin with fastify.register?',
    'Die Hard is a film', // one German-looking word is not enough
    'naïve café résumé',
  ]) {
    assert.equal(questionLanguage(english), null, english);
  }
});

test('in another language its function words and the pieces of its accented words are no terms', () => {
  const q = analyzeQuery('Wie erhöhe ich das bodyLimit für große Uploads?');
  assert.equal(q.language, 'de');
  assert.deepEqual(q.terms, ['bodylimit', 'body', 'limit', 'uploads']);
  // English keeps every word it had, accented ones included.
  const e = analyzeQuery('naïve parsing of the café menu');
  assert.equal(e.language, null);
  assert.ok(e.terms.includes('na') && e.terms.includes('caf'), e.terms.join(' '));
});
