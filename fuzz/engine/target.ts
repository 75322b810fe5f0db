// What a fuzz target is: one decoder path of the broker, run on one input. A target returns (or
// resolves) for input the decoder takes, and throws for input it refuses; `is_expected` says which
// errors are the decoder's own declared refusals. Any other error is a crash.

export interface FuzzTarget {
  /** The target's name: its file in fuzz/targets/ and its corpus folder in fuzz/corpus/. */
  name: string;
  /** One line: what the target runs. */
  summary: string;
  /**
   * Runs the decoder path on `input`. It may return a short label of what the input reached (an
   * API and version decoded, say): each new label keeps the input, as a new block would.
   */
  run(input: Buffer): void | string | Promise<void | string>;
  /** Whether `error`, thrown by `run`, is a refusal the decoder declares (not a crash). */
  is_expected(error: unknown): boolean;
  /** The longest input the mutator makes. */
  max_bytes: number;
  /** Byte strings worth splicing into inputs: magic numbers, names, header keys. */
  dictionary?: readonly Buffer[];
}
