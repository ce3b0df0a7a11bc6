/**
 * Notebook 00's plan row (./plan-evaluation.ts): a model loaded (`loadModel`), a few sentences
 * embedded with every pooling strategy (`PooledSentenceEncoder`, max length 64 as in the SentEval
 * evaluation) and compared by cosine similarity — the building blocks every other notebook's rows
 * use. Under the rehearsal preset the plan asks it to rehearse instead: the model is its config at
 * its real size with random weights (./rehearsal/models.ts), the sentences are compared the same
 * way, and the encoding is rehearsed at its real shapes (./rehearsal/encode.ts).
 *
 * Nothing is recorded (the comparison takes a second); the model stays loaded for the notebook's
 * tables (its tokenizer, its size), so the notebook disposes it (`poolingComparisonOf(plan).loaded`).
 */
import { PooledSentenceEncoder } from '../embed/encoder.js';
import { cosineSimilarityMatrix } from '../embed/similarity.js';
import { POOLING_STRATEGIES, type Pooling } from '../models/pooling.js';
import type { LoadedModel } from '../models/types.js';
import { loadModelOrExplain } from './evaluation-models.js';
import type { EvaluationOutcome, RehearsalContext, RehearsedEvaluation, RowEvaluation } from './plan-evaluation.js';
import type { Plan, PlanRow } from './plan.js';
import { rehearseEncoding } from './rehearsal/encode.js';

/** The sentences' cosine similarity matrix under each pooling strategy, or why the model could not be loaded. */
export interface PoolingComparison {
  model: string;
  texts: readonly string[];
  strategies: readonly Pooling[];
  /** By strategy: the texts' cosine similarity matrix. */
  similarities: Record<string, number[][]>;
  /** The model as loaded; the caller disposes it. */
  loaded?: LoadedModel;
  why?: string;
}

export interface PoolingComparisonOptions {
  /** Token limit (default 64, as in the SentEval evaluation). */
  maxLength?: number;
  /** What the rehearsal summary calls the row's encoding. */
  run?: string;
}

/** One model's texts under every pooling strategy (see the file comment). */
export class PoolingComparisonEvaluation implements RowEvaluation {
  readonly kind = 'pooling-comparison';
  readonly recorded = false;

  constructor(
    readonly model: string,
    readonly texts: readonly string[],
    private readonly o: PoolingComparisonOptions = {},
  ) {}

  get summary(): string {
    return `${this.texts.length} sentences under ${POOLING_STRATEGIES.length} pooling strategies, cosine similarity`;
  }

  get identity(): string {
    return JSON.stringify({ kind: this.kind, model: this.model, texts: this.texts, o: this.o });
  }

  private async compare(found: Awaited<ReturnType<typeof loadModelOrExplain>>): Promise<PoolingComparison> {
    const base = { model: this.model, texts: this.texts, strategies: POOLING_STRATEGIES, similarities: {} };
    if (!found.loaded) return { ...base, why: found.why };
    const similarities: Record<string, number[][]> = {};
    for (const pooling of POOLING_STRATEGIES) {
      const encoder = new PooledSentenceEncoder(found.loaded, { pooling, maxLength: this.o.maxLength ?? 64 });
      similarities[pooling] = cosineSimilarityMatrix(await encoder.encode([...this.texts]));
    }
    return { ...base, similarities, loaded: found.loaded };
  }

  async run(): Promise<EvaluationOutcome> {
    const result = await this.compare(await loadModelOrExplain(this.model));
    return { runs: [], result, ...(result.why ? { why: result.why } : {}) };
  }

  async rehearse(ctx: RehearsalContext): Promise<RehearsedEvaluation> {
    const result = await this.compare(await loadModelOrExplain(this.model, { preset: 'rehearsal' }));
    const row = await rehearseEncoding({ notebook: ctx.notebook, run: this.o.run ?? 'the sentences (every pooling)', model: this.model, texts: this.texts, batchSize: 32, resultsDir: ctx.resultsDir });
    return { rows: [row], result };
  }
}

/** The notebook's one row: `model`'s `texts` under every pooling strategy. */
export function poolingComparisonRows(model: string, texts: readonly string[], o: PoolingComparisonOptions = {}): PlanRow[] {
  return [{ row: 'the sentences (every pooling)', cells: [], offTable: true, evaluation: new PoolingComparisonEvaluation(model, texts, o) }];
}

/** After `plan.run()`: the comparison of the plan's row (its model loaded, or why not). */
export function poolingComparisonOf(plan: Plan): PoolingComparison {
  const row = plan.rows.find((r) => r.evaluation instanceof PoolingComparisonEvaluation);
  const result = row && (plan.outcomeOf(row)?.result as PoolingComparison | undefined);
  if (!result) throw new Error('poolingComparisonOf: the plan has no pooling comparison that ran (call plan.run() first)');
  return result;
}
