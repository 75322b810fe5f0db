import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redrive_selection } from './api_dead_letters.ts';
import { HttpError } from './http_errors.ts';

// A body may nest a value some thousands deep (it only has to be under 1 MiB); quoting such an
// offsets item in the refusal overflowed JSON.stringify's stack: a 500 instead of a 400.
test('redrive_offsets_nested_too_deeply: an offsets item too deep to quote is refused as invalid_body', () => {
  const deep = JSON.parse(`{"offsets": [${'['.repeat(100_000)}${']'.repeat(100_000)}]}`) as Record<string, unknown>;
  assert.throws(
    () => redrive_selection(deep),
    (error: unknown) => error instanceof HttpError && error.status === 400 && error.code === 'invalid_body',
  );
  assert.deepEqual(redrive_selection({ offsets: [3, { partition: 1, offset: 4 }] }), [
    { partition: 0, offset: 3 },
    { partition: 1, offset: 4 },
  ]);
});
