// Block coverage from V8 itself, through node:inspector: precise coverage with call counts and
// block granularity counts how often each block of each function ran, and every take resets the
// counts. Only scripts under src/ count, so the engine, the target and Node's own code do not steer
// the search. No instrumenting build step is needed, which is why this engine can be this small.
import inspector from 'node:inspector';
import { pathToFileURL } from 'node:url';

interface CoverageRange {
  startOffset: number;
  endOffset: number;
  count: number;
}

interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: Array<{ ranges: CoverageRange[] }>;
}

/** Offsets stay below 2^20 (a source file is at most 600 lines of 120 characters, plus transpiling). */
const OFFSET_SPACE = 2 ** 20;

export class CoverageProbe {
  private readonly session = new inspector.Session();
  private readonly source_prefix: string;
  /** Per script id: a small number for a script under src/, -1 for any other. */
  private readonly script_ids = new Map<string, number>();
  private next_script = 1;

  /** Counts blocks of the scripts under `source_dir`; start it before the code under test is loaded. */
  constructor(source_dir: string) {
    this.source_prefix = pathToFileURL(source_dir).href + '/';
    this.session.connect();
    this.post('Profiler.enable');
    this.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  }

  /**
   * The blocks that ran since the last take, each as one number (script, start, end), and resets
   * the counts. A block counts once however often it ran.
   */
  take(): number[] {
    const { result } = this.post('Profiler.takePreciseCoverage') as { result: ScriptCoverage[] };
    const blocks: number[] = [];
    for (const script of result) {
      const script_number = this.script_number(script);
      if (script_number < 0) continue;
      const base = script_number * OFFSET_SPACE * OFFSET_SPACE;
      for (const fn of script.functions) {
        for (const range of fn.ranges) {
          if (range.count > 0) blocks.push(base + range.startOffset * OFFSET_SPACE + range.endOffset);
        }
      }
    }
    return blocks;
  }

  stop(): void {
    this.post('Profiler.stopPreciseCoverage');
    this.session.disconnect();
  }

  private script_number(script: ScriptCoverage): number {
    let number = this.script_ids.get(script.scriptId);
    if (number === undefined) {
      number = script.url.startsWith(this.source_prefix) ? this.next_script++ : -1;
      this.script_ids.set(script.scriptId, number);
    }
    return number;
  }

  /** The in-process session answers synchronously, which keeps the fuzz loop free of awaits. */
  private post(method: string, params?: object): unknown {
    let failure: Error | null = null;
    let answer: unknown;
    this.session.post(method, params, (error, result) => {
      failure = error;
      answer = result;
    });
    if (failure) throw failure;
    return answer;
  }
}
