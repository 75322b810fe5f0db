// The authorizer's rules, as Kafka's: literal, wildcard and prefixed patterns; deny over allow; no
// matching allow is a no; implied describe; principal and host wildcards; super users; filters.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AclBinding, AclFilter } from '../../core/acls.ts';
import { Authorizer, filter_matches } from './authorizer.ts';
import { binding_problem } from './acls.ts';

const alice = { principal: 'User:alice', host: '10.0.0.1' };
const bob = { principal: 'User:bob', host: '10.0.0.2' };

function acl(change: Partial<AclBinding>): AclBinding {
  return {
    resource_type: 'topic',
    resource_name: 'a',
    pattern_type: 'literal',
    principal: 'User:alice',
    host: '*',
    operation: 'read',
    permission: 'allow',
    ...change,
  };
}

function authorizer(...bindings: AclBinding[]): Authorizer {
  const authorizer = new Authorizer(new Set(['User:admin']));
  authorizer.load(bindings);
  return authorizer;
}

test('a literal allow lets its principal do its operation on its resource, and nothing else', () => {
  const check = authorizer(acl({}));
  assert.equal(check.authorize(alice, 'read', 'topic', 'a'), true);
  assert.equal(check.authorize(alice, 'describe', 'topic', 'a'), true, 'read implies describe');
  assert.equal(check.authorize(alice, 'write', 'topic', 'a'), false);
  assert.equal(check.authorize(alice, 'read', 'topic', 'b'), false);
  assert.equal(check.authorize(alice, 'read', 'group', 'a'), false);
  assert.equal(check.authorize(bob, 'read', 'topic', 'a'), false);
});

test('prefixed and * patterns, User:* and host wildcards, a host of its own', () => {
  const check = authorizer(
    acl({ pattern_type: 'prefixed', resource_name: 'logs-', operation: 'write' }),
    acl({ resource_name: '*', principal: 'User:*', operation: 'describe' }),
    acl({ resource_type: 'group', resource_name: 'g', host: '10.0.0.1' }),
  );
  assert.equal(check.authorize(alice, 'write', 'topic', 'logs-1'), true);
  assert.equal(check.authorize(alice, 'write', 'topic', 'log'), false);
  assert.equal(check.authorize(bob, 'describe', 'topic', 'anything'), true);
  assert.equal(check.authorize(alice, 'read', 'group', 'g'), true);
  assert.equal(check.authorize({ ...alice, host: '10.9.9.9' }, 'read', 'group', 'g'), false);
});

test('a deny wins over any allow; all covers every operation; super users pass', () => {
  const check = authorizer(
    acl({ resource_name: '*', operation: 'all' }),
    acl({ resource_name: 'secret', permission: 'deny', operation: 'read' }),
  );
  assert.equal(check.authorize(alice, 'alter_configs', 'topic', 'x'), true);
  assert.equal(check.authorize(alice, 'read', 'topic', 'secret'), false);
  assert.equal(check.authorize(alice, 'write', 'topic', 'secret'), true, 'the deny is for read only');
  assert.equal(check.authorize({ principal: 'User:admin', host: '1.1.1.1' }, 'delete', 'cluster', 'x'), true);
});

test('answers are forgotten when the bindings change', () => {
  const check = authorizer();
  assert.equal(check.authorize(alice, 'read', 'topic', 'a'), false);
  check.load([acl({})]);
  assert.equal(check.authorize(alice, 'read', 'topic', 'a'), true);
});

test('filters: any, match (the patterns that apply to a name), exact', () => {
  const any: AclFilter = {
    resource_type: 'any',
    resource_name: null,
    pattern_type: 'any',
    principal: null,
    host: null,
    operation: 'any',
    permission: 'any',
  };
  const prefixed = acl({ pattern_type: 'prefixed', resource_name: 'lo' });
  assert.equal(filter_matches(any, prefixed), true);
  assert.equal(filter_matches({ ...any, pattern_type: 'match', resource_name: 'logs' }, prefixed), true);
  assert.equal(filter_matches({ ...any, pattern_type: 'literal', resource_name: 'logs' }, prefixed), false);
  assert.equal(filter_matches({ ...any, resource_name: 'lo' }, prefixed), true);
  assert.equal(filter_matches({ ...any, principal: 'User:bob' }, prefixed), false);
});

test('a binding that cannot apply is refused with its reason', () => {
  assert.equal(binding_problem(acl({})), null);
  assert.match(binding_problem(acl({ principal: 'alice' }))!, /TYPE:NAME/);
  assert.match(binding_problem(acl({ host: 'example.com' }))!, /IP address/);
  assert.match(binding_problem(acl({ resource_type: 'group', operation: 'write' }))!, /does not apply/);
  assert.match(binding_problem(acl({ resource_type: 'cluster', resource_name: 'c' }))!, /kafka-cluster/);
  assert.match(binding_problem(acl({ resource_name: '' }))!, /empty/);
});
