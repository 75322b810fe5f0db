// The generated parts of the docs are what the code says (run `npm run docs` after changing it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GENERATED_PARTS, current_part } from '../scripts/docs.ts';

for (const part of GENERATED_PARTS) {
  test(`${part.file} (${part.name}) is what the code generates`, () => {
    const current = current_part(part);
    assert.ok(current !== null, `${part.file} has no generated ${part.name} section`);
    assert.equal(current, part.render(), `${part.file} is out of date: run npm run docs`);
  });
}
