import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerError } from '../../core/errors.ts';
import { compile_topic_regex } from './topic_regex.ts';

const refused = (error: unknown) => error instanceof BrokerError && error.kind === 'invalid_regular_expression';

test('topic regexes match whole names', () => {
  const pattern = compile_topic_regex('orders\\..*|audit-[0-9]+');
  assert.ok(pattern.test('orders.eu'));
  assert.ok(pattern.test('audit-12'));
  assert.ok(!pattern.test('x-orders.eu'));
  assert.ok(!pattern.test('audit-12x'));
  assert.ok(compile_topic_regex('(eu|us)-[a-z]+').test('eu-payments'));
  assert.ok(compile_topic_regex('[(a+)+]x').test('+x'), 'brackets inside a class are plain characters');
});

test('patterns that could backtrack for ever, backreferences and lookaround are refused', () => {
  for (const regex of ['(a+)+', '(a*)*b', '((ab)*)+', '(x|y+){2,}', '(a)\\1', '(?<n>a)\\k<n>', 'a(?=b)', '(?<!a)b'])
    assert.throws(() => compile_topic_regex(regex), refused, regex);
  assert.throws(() => compile_topic_regex('('), refused);
  assert.throws(() => compile_topic_regex('a'.repeat(1001)), refused);
  // Refused quickly: the check never runs the pattern.
  const started = performance.now();
  assert.throws(() => compile_topic_regex('(a+)+$'), refused);
  assert.ok(performance.now() - started < 50);
});
