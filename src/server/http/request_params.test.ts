import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpError } from './http_errors.ts';
import { json_excerpt, request_url } from './request_params.ts';

// Found by fuzzing (http_request): Node's HTTP parser passes these request targets on, and the
// URL constructor's TypeError made the request a 500 with an error logged.
test('request_target_not_a_url: a target no URL parser takes is a 400 invalid_url', () => {
  for (const target of ['//[', 'http://[', '//%zz', '//a:b@c:99999']) {
    assert.throws(
      () => request_url(target),
      (error: unknown) => error instanceof HttpError && error.status === 400 && error.code === 'invalid_url',
      target,
    );
  }
  assert.equal(request_url('/api/v1/topics?limit=5').searchParams.get('limit'), '5');
});

test('json_excerpt: short JSON of a request value, cut, and never an error', () => {
  assert.equal(json_excerpt({ a: 1 }), '{"a":1}');
  assert.equal(json_excerpt('x'.repeat(500)).length, 103);
  const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)) as unknown;
  assert.equal(json_excerpt(deep), '(a value nested too deeply to show)');
});
