// Subscription regexes of KIP-848 members (SubscribedTopicRegex), matched against whole topic
// names. Kafka evaluates them with RE2/J, in linear time; JavaScript's engine backtracks, so a
// pattern that could take exponential time on a topic name (a quantified group that holds a
// quantifier, such as `(a+)+`) or that needs backtracking to mean anything (backreferences,
// lookaround) is refused as INVALID_REGULAR_EXPRESSION: a client cannot stall the broker with one.
import { BrokerError } from '../../core/errors.ts';

/** The longest subscription regex accepted. */
export const TOPIC_REGEX_CHARS_MAX = 1_000;

function refuse(regex: string, why: string): never {
  throw new BrokerError('invalid_regular_expression', `topic regex ${regex} is refused: ${why}`);
}

/** Whether `regex[at]` begins a quantifier: `*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}`. */
function quantifier_at(regex: string, at: number): boolean {
  const c = regex[at];
  return c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d+(,\d*)?\}/.test(regex.slice(at)));
}

/** Walks the pattern: refuses backreferences, lookaround and quantified groups holding a quantifier. */
function check_safe(regex: string): void {
  const groups: boolean[] = []; // per open group: whether it holds a quantifier
  let in_class = false;
  for (let i = 0; i < regex.length; i++) {
    const c = regex[i]!;
    if (c === '\\') {
      const next = regex[i + 1] ?? '';
      if (/[1-9]/.test(next) || next === 'k') refuse(regex, 'backreferences are not supported');
      i++;
    } else if (in_class) in_class = c !== ']';
    else if (c === '[') in_class = true;
    else if (c === '(') {
      if (/^\(\?<?[=!]/.test(regex.slice(i))) refuse(regex, 'lookahead and lookbehind are not supported');
      groups.push(false);
    } else if (c === ')') {
      const held = groups.pop() ?? false;
      if (quantifier_at(regex, i + 1)) {
        if (held) refuse(regex, 'a repeated group must not repeat inside (it could take exponential time)');
        if (groups.length > 0) groups[groups.length - 1] = true;
      }
    } else if (quantifier_at(regex, i) && regex[i - 1] !== '(' && groups.length > 0) {
      groups[groups.length - 1] = true;
    }
  }
}

/** The regex compiled to match whole topic names; invalid or unsafe ones are refused. */
export function compile_topic_regex(regex: string): RegExp {
  if (regex.length > TOPIC_REGEX_CHARS_MAX)
    refuse(regex.slice(0, 40), `longer than ${TOPIC_REGEX_CHARS_MAX} characters`);
  check_safe(regex);
  try {
    return new RegExp(`^(?:${regex})$`);
  } catch (error) {
    throw new BrokerError('invalid_regular_expression', `invalid topic regex ${regex}: ${(error as Error).message}`);
  }
}
