// The partition assignors on their own: round robin and range as Java assigns, and the consumer
// protocol encodings, readable by kafkajs and back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AssignerProtocol as KafkajsProtocol } from 'kafkajs';
import { AssignerProtocol, range_assign, round_robin_assign } from './assignors.ts';

test('assignors: round robin and range as Java assigns, encodings readable by kafkajs and back', () => {
  const partitions = new Map([
    ['a', 3],
    ['b', 2],
  ]);
  const members = [
    { memberId: 'm2', topics: ['a', 'b'] },
    { memberId: 'm1', topics: ['a', 'b'] },
  ];
  const plain = (result: Map<string, Record<string, number[]>>) =>
    JSON.parse(JSON.stringify(Object.fromEntries(result))) as unknown;
  assert.deepEqual(plain(round_robin_assign(members, partitions)), {
    m2: { a: [1], b: [0] },
    m1: { a: [0, 2], b: [1] },
  });
  assert.deepEqual(plain(range_assign(members, partitions)), { m2: { a: [2], b: [1] }, m1: { a: [0, 1], b: [0] } });
  // A member not subscribed to a topic gets none of it.
  const mixed = round_robin_assign(
    [
      { memberId: 'x', topics: ['a'] },
      { memberId: 'y', topics: ['a', 'b'] },
    ],
    partitions,
  );
  assert.deepEqual(plain(mixed), { x: { a: [0, 2] }, y: { a: [1], b: [0, 1] } });

  const metadata = AssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['a', 'b'] });
  assert.deepEqual(KafkajsProtocol.MemberMetadata.decode(metadata), {
    version: 0,
    topics: ['a', 'b'],
    userData: Buffer.alloc(0),
  });
  const theirs = KafkajsProtocol.MemberMetadata.encode({ version: 0, topics: ['t'], userData: Buffer.alloc(0) });
  assert.deepEqual(AssignerProtocol.MemberMetadata.decode(theirs)?.topics, ['t']);
  const assignment = AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { a: [0, 2], b: [1] } });
  assert.deepEqual(KafkajsProtocol.MemberAssignment.decode(assignment)?.assignment, { a: [0, 2], b: [1] });
  const back = KafkajsProtocol.MemberAssignment.encode({
    version: 0,
    assignment: { t: [3] },
    userData: Buffer.alloc(0),
  });
  assert.deepEqual({ ...AssignerProtocol.MemberAssignment.decode(back)?.assignment }, { t: [3] });
  // Java's v1 subscription adds owned partitions after the user data: ignored.
  const v1 = Buffer.concat([
    AssignerProtocol.MemberMetadata.encode({ version: 1, topics: ['a'] }),
    Buffer.from([0, 0, 0, 0]),
  ]);
  assert.deepEqual(AssignerProtocol.MemberMetadata.decode(v1)?.topics, ['a']);
  assert.equal(AssignerProtocol.MemberAssignment.decode(Buffer.alloc(0)), null);
});
