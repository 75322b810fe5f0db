// Topic-exchange patterns: words separated by dots, `*` one word, `#` zero or more. Patterns are
// compiled once to word lists and kept in a bounded cache, since every publish to a topic exchange
// tests every binding.

/** Patterns kept compiled; beyond this the cache starts again (bindings are few in practice). */
const COMPILED_PATTERNS_MAX = 10_000;
const compiled = new Map<string, (routing_key: string) => boolean>();

export function topic_matcher(pattern: string): (routing_key: string) => boolean {
  let match = compiled.get(pattern);
  if (!match) {
    if (compiled.size >= COMPILED_PATTERNS_MAX) compiled.clear();
    const words = pattern.split('.');
    match = (routing_key: string) => words_match(words, 0, routing_key.split('.'), 0);
    compiled.set(pattern, match);
  }
  return match;
}

function words_match(pattern: readonly string[], p: number, key: readonly string[], k: number): boolean {
  for (;;) {
    if (p === pattern.length) return k === key.length;
    const word = pattern[p]!;
    if (word === '#') {
      // Collapse runs of # and try every split point: patterns are short, so this stays cheap.
      while (p + 1 < pattern.length && pattern[p + 1] === '#') p++;
      if (p + 1 === pattern.length) return true;
      for (let skip = k; skip <= key.length; skip++) if (words_match(pattern, p + 1, key, skip)) return true;
      return false;
    }
    if (k === key.length) return false;
    if (word !== '*' && word !== key[k]) return false;
    p++;
    k++;
  }
}
