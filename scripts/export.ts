/**
 * npm run export -- (--run <run dir | record.json> | --model <dir | hub id>) --out <dir> [options]
 *
 * A trained run or any model, as a folder other tools take as it is:
 *
 * - an encoder (BERT): a sentence-transformers folder (lib/embed/sentence-transformer-export.ts)
 *   — weights as safetensors, complete tokenizer files, modules.json with the pooling (and the
 *   Dense layer a pooling needs), config_sentence_transformers.json — that sentence-transformers,
 *   HF transformers and MTEB load, with `onnx/model.onnx` for transformers.js and ONNX Runtime
 *   when --onnx is given;
 * - a LoRA run (its best checkpoint holds only the adapters): PEFT's adapter layout
 *   (lib/models/adapters/peft.ts), for `PeftModel.from_pretrained(base, dir)`;
 *
 * both with a model card, README.md (lib/embed/model-card.ts): usage, the pipeline, the training
 * recipe as the run recorded it, every evaluation of the exported weights found in the results
 * folder with its record and provenance, and AnglE's citation; and, where evaluations wrote them,
 * the MTEB result files under mteb/ (scripts/export/card.ts checks each against its record).
 *
 * A run is its record results/<experiment>/<run-id>.json (what `npm run train` prints) or its
 * folder results/<experiment>/runs/<run id or key>/ (or its best/ subfolder); the weights exported
 * are its best dev checkpoint. Every
 * argument is checked before any model is loaded. Exit: 0 written, 2 usage or input error, 3 a
 * resource missing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { initBackend } from '../lib/backend/index.js';
import { resolveResultsDir } from '../lib/config.js';
import { modelCardMarkdown, type ModelCardInput } from '../lib/embed/model-card.js';
import { POOLING_STRATEGIES, type Pooling } from '../lib/embed/pooling.js';
import { exportSentenceTransformer, sentenceTransformerSpec } from '../lib/embed/sentence-transformer-export.js';
import { addLora } from '../lib/models/adapters/lora.js';
import { ADAPTER_WEIGHTS_FILE, exportLoraAdapter } from '../lib/models/adapters/peft.js';
import type { AdaptableModel } from '../lib/models/adapters/types.js';
import { loadModel } from '../lib/models/auto.js';
import { checkExportTarget } from '../lib/models/sentence-transformers/write.js';
import { sentenceEmbeddingDim, type SentenceEmbeddingStep } from '../lib/models/sentence-transformers/spec.js';
import type { LoadedModel } from '../lib/models/types.js';
import { portableModelRef } from '../lib/report/training-record.js';
import { restoreBestWeights } from '../lib/train/best-model.js';
import { cardResults, cardTraining, mtebShipment } from './export/card.js';
import { exportablePooling, exportPooling } from './export/pooling.js';
import { evaluationsOf, localModelRef, runSource, type RunSource } from './export/run-source.js';
import { EXIT, helpText, parseOptions, runCommand, UsageError, validateArguments, type OptionSpecs } from './cli/command.js';

const OPTIONS = {
  run: { type: 'string', value: '<dir|record>', help: "a trained run: its record results/<experiment>/<run-id>.json (what `npm run train` prints), or its run folder results/<experiment>/runs/<run id or key>/ (or its best/); `project:…` paths as records write them too; exports its best dev checkpoint" },
  model: { type: 'string', value: '<dir|id>', help: 'any model instead: a local model directory (HF or sentence-transformers folder) or a Hub id' },
  out: { type: 'string', value: '<dir>', help: 'the folder to write (refused when it exists and is not empty, unless --overwrite)' },
  pooling: { type: 'string', value: '<name>', help: `the pooling the folder computes: ${POOLING_STRATEGIES.join(', ')} (batch-dependent ones are refused)`, default: "the model's pooling module (a run's best/ is saved with the pooling it trained with; a sentence-transformers folder's modules), else a run's recorded pooling, else the architecture's default (BERT cls)" },
  'max-length': { type: 'string', value: '<n>', help: 'max_seq_length: tokens per text, special tokens included (also tokenizer_config model_max_length)', default: "a run's recorded maxLength, else the model's max positions" },
  normalize: { type: 'boolean', help: 'append a Normalize module (unit-length embeddings; cosine scores unchanged)' },
  'truncate-layer': { type: 'string', value: '<n>', help: "keep the first n transformer layers (angle_emb's truncate_layer; an Espresso/ESE model's shallow layers): config.json num_hidden_layers, their weights and the ONNX graph end there", default: 'every layer' },
  'truncate-dim': { type: 'string', value: '<n>', help: "keep the first n components of each embedding (angle_emb's embedding_size, sentence-transformers' truncate_dim): a Dense [I 0] module after the pooling, before Normalize", default: 'the full width' },
  onnx: { type: 'boolean', help: 'also write onnx/model.onnx (the transformer as ONNX: transformers.js, ONNX Runtime)' },
  name: { type: 'string', value: '<name>', help: 'the model name in the card', default: 'the --out folder name' },
  results: { type: 'string', value: '<dir>', help: 'the results folder searched for evaluations of the exported weights', default: "the run's results folder; with --model ANGLE_RESULTS_DIR, else results/" },
  'base-model': { type: 'string', value: '<dir|id>', help: "a LoRA run's base model, when its record names a folder of another machine", default: "the record's model" },
  overwrite: { type: 'boolean', help: 'replace an existing --out folder' },
  help: { type: 'boolean', short: 'h', help: 'this text' },
} satisfies OptionSpecs;

const USAGE = 'usage: npm run export -- (--run <run dir|record.json> | --model <dir|hub id>) --out <dir> [--pooling <name>] [--onnx] [options]';
const FOOTER = `Encoders (BERT) become sentence-transformers folders; a LoRA run becomes a PEFT adapter folder (--pooling, --max-length,
--normalize and --onnx do not apply to it). Both get a README.md model card and the MTEB result files of their evaluations.
Exit codes: 0 written, 2 usage or input error (one line), 3 a backend or resource this machine lacks.`;

type Values = ReturnType<typeof parseOptions<typeof OPTIONS>>['values'];

interface Plan {
  v: Values;
  out: string;
  name: string;
  source: RunSource | { kind: 'model'; model: string };
  /** --pooling; without it the model's own pooling module, once the model is loaded (./export/pooling.ts). */
  pooling?: Pooling;
  maxLength?: number;
  /** --truncate-layer / --truncate-dim (checked against the model once it is loaded). */
  truncate?: { layer?: number; dim?: number };
  adapter: boolean;
  resultsDir: string;
}

function integer(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} expects a positive integer, got '${v}'`);
  return n;
}

/** --truncate-layer (0 is refused: an export keeps at least one layer) and --truncate-dim, as given. */
function truncation(v: Values): Plan['truncate'] {
  const layer = integer('truncate-layer', v['truncate-layer']);
  const dim = integer('truncate-dim', v['truncate-dim']);
  return layer === undefined && dim === undefined ? undefined : { ...(layer !== undefined ? { layer } : {}), ...(dim !== undefined ? { dim } : {}) };
}

function plan(argv: string[]): Plan | undefined {
  const { values: v } = parseOptions(OPTIONS, argv);
  if (v.help) return undefined;
  // Paths as records and model cards write them (`project:results/…`, `shared:golden/…`) are taken
  // as given, so the card's "how made" command runs as written from the project.
  for (const k of ['run', 'model', 'results', 'base-model'] as const) {
    const given = v[k];
    if (typeof given === 'string' && /^(shared|project):/.test(given)) v[k] = localModelRef(given);
  }
  if ((v.run === undefined) === (v.model === undefined)) throw new UsageError('give what to export: --run <run dir|record.json> or --model <dir|hub id> (one of them)');
  if (!v.out) throw new UsageError('--out <dir> is required: the folder to write');
  const out = resolve(v.out);
  checkExportTarget(out, v.overwrite);
  const maxLength = integer('max-length', v['max-length']);
  const truncate = truncation(v);
  if (v.model !== undefined) {
    if (v['base-model'] !== undefined) throw new UsageError('--base-model applies to a LoRA --run only');
    return { v, out, name: v.name ?? basename(out), source: { kind: 'model', model: v.model }, ...(v.pooling !== undefined ? { pooling: exportablePooling(v.pooling) } : {}), maxLength, ...(truncate ? { truncate } : {}), adapter: false, resultsDir: resolveResultsDir(v.results) };
  }
  const source = runSource(v.run!);
  const adapter = source.best.trainable === 'subset';
  if (adapter) {
    const encoderFlags = (['pooling', 'max-length', 'normalize', 'onnx', 'truncate-layer', 'truncate-dim'] as const).filter((k) => v[k] !== undefined);
    if (encoderFlags.length) throw new UsageError(`--${encoderFlags[0]} does not apply to a LoRA run (it exports PEFT adapters, not a sentence-transformers folder)`);
  } else if (v['base-model'] !== undefined) {
    throw new UsageError('--base-model applies to a LoRA run only (this run trained the whole model)');
  }
  const recorded = source.run.record.config as { maxLength?: unknown };
  // Without --pooling, the pooling is the model's own module, read once best/ is loaded (./export/pooling.ts).
  const pooling = adapter || v.pooling === undefined ? undefined : exportablePooling(v.pooling);
  const length = adapter ? undefined : (maxLength ?? (typeof recorded.maxLength === 'number' ? recorded.maxLength : undefined));
  return { v, out, name: v.name ?? basename(out), source, ...(pooling ? { pooling } : {}), maxLength: length, ...(truncate ? { truncate } : {}), adapter, resultsDir: resolve(v.results ?? source.resultsDir) };
}

/** The command line that made the folder, with portable paths (the card is published). */
function commandLine(argv: string[]): string {
  const pathFlags = new Set(['--run', '--model', '--results', '--base-model']);
  const parts = argv.map((a, i) => (i > 0 && pathFlags.has(argv[i - 1]!) && existsSync(a) ? portableModelRef(a) : i > 0 && argv[i - 1] === '--out' ? basename(resolve(a)) : a));
  return `npm run export -- ${parts.map((p) => (/^[\w.,:/=@+-]+$/.test(p) ? p : JSON.stringify(p))).join(' ')}`;
}

function describeStep(s: SentenceEmbeddingStep): string {
  switch (s.module) {
    case 'Pooling':
      return `Pooling(${s.modes.join(' + ')})`;
    case 'Dense':
      return `Dense(${s.inFeatures} → ${s.outFeatures}, ${s.activation}${s.bias ? '' : ', no bias'})`;
    case 'WeightedLayerPooling':
      return `WeightedLayerPooling(layer_start ${s.layerStart}, weights [${[...s.weights].join(', ')}])`;
    case 'Normalize':
      return 'Normalize';
  }
}

function parameterCount(m: LoadedModel): number {
  let n = 0;
  for (const v of m.model.params.values()) n += v.size;
  return n;
}

/** Notes every card of this source carries. */
function notesFor(p: Plan): string[] {
  const notes: string[] = [];
  const smoke =
    p.source.kind === 'run' &&
    ((p.source.run.record.details as { preset?: unknown } | undefined)?.preset === 'smoke' || basename(p.source.resultsDir) === 'smoke');
  if (smoke) notes.push("These weights come from a run of the `smoke` preset (a tiny randomly initialised BERT, a few dozen steps): its numbers exercise the code and say nothing about the papers' results.");
  return notes;
}

async function exportEncoder(p: Plan, m: LoadedModel, argv: string[]): Promise<{ files: string[]; skipped: string[]; results: number }> {
  const spec = sentenceTransformerSpec(m.model, { pooling: p.pooling!, maxLength: p.maxLength, normalize: p.v.normalize, truncate: p.truncate });
  const layers = p.truncate?.layer ?? m.model.numLayers;
  const evaluations = evaluationsOf(p.resultsDir, m.weightsSha256);
  const mteb = mtebShipment(evaluations, p.resultsDir);
  const training = p.source.kind === 'run' ? cardTraining(p.source.run, p.source.resultsDir) : undefined;
  const results = [...(p.source.kind === 'run' ? cardResults([p.source.run], p.source.resultsDir) : []), ...cardResults(evaluations, p.resultsDir)];
  const jsPooling = p.pooling === 'cls' ? 'cls' : p.pooling === 'avg' ? 'mean' : undefined;
  const usage: ModelCardInput['usage'] = [
    {
      title: 'sentence-transformers (Python)',
      language: 'python',
      code: `from sentence_transformers import SentenceTransformer\n\nmodel = SentenceTransformer("path/to/${p.name}")\nembeddings = model.encode(["A man is playing a guitar.", "Someone plays an instrument."])\nprint(model.similarity(embeddings[0:1], embeddings[1:2]))`,
    },
  ];
  if (p.v.onnx && jsPooling) {
    usage.push({
      title: 'transformers.js (onnx/model.onnx)',
      language: 'js',
      code: `import { env, pipeline } from '@huggingface/transformers';\n\nenv.localModelPath = 'path/to/'; // the folder that holds ${p.name}/\nenv.allowRemoteModels = false;\nconst extractor = await pipeline('feature-extraction', '${p.name}', { dtype: 'fp32' });\nconst embeddings = await extractor(['A man is playing a guitar.', 'Someone plays an instrument.'], { pooling: '${jsPooling}', normalize: ${p.v.normalize ? 'true' : 'false'} });`,
      note: `transformers.js pools the ONNX graph's last_hidden_state itself; \`pooling: '${jsPooling}'\` is this model's \`${p.pooling}\`.${p.truncate?.dim !== undefined ? ` Its pipeline has no truncate_dim: keep the first ${p.truncate.dim} components of each pooled vector yourself (pool without normalize, slice, then normalize if you want unit vectors).` : ''}`,
    });
  } else if (p.v.onnx) {
    usage.push({
      title: 'ONNX (onnx/model.onnx)',
      language: 'text',
      code: 'inputs: input_ids, attention_mask, token_type_ids (int64 [batch, sequence]); output: last_hidden_state [batch, sequence, hidden]',
      note: `The pooling \`${p.pooling}\` (${spec.steps.map(describeStep).join(' → ')}) is applied after the graph, as modules.json says; transformers.js' pipeline offers only mean and cls pooling.`,
    });
  }
  const card: ModelCardInput = {
    name: p.name,
    library: 'sentence-transformers',
    ...(m.source === 'hub' ? { baseModelHubId: m.id } : training && !/^(shared|project|local):/.test(training.startedFrom.id) ? { baseModelHubId: training.startedFrom.id } : {}),
    model: [
      ['architecture', `${m.model.architecture} (BertModel), ${layers < m.model.numLayers ? `the first ${layers} of its ${m.model.numLayers} layers (--truncate-layer)` : `${m.model.numLayers} layers`}, hidden size ${m.model.hiddenSize}, ${parameterCount(m).toLocaleString('en-US')} parameters`],
      ['pooling', `\`${p.pooling}\` (AnglE's name) → ${spec.steps.map(describeStep).join(' → ')}`],
      ['max_seq_length', String(spec.maxSeqLength)],
      ['embedding dimension', `${sentenceEmbeddingDim(spec, m.model.hiddenSize)}${p.truncate?.dim !== undefined ? ' (the first components: --truncate-dim)' : ''}`],
      ['similarity', 'cosine'],
      ['weights sha256', `\`${m.weightsSha256}\``],
      ['weights from', p.source.kind === 'run' ? `best dev checkpoint of run \`${p.source.run.record.runId}\` (step ${p.source.best.step}, ${p.source.best.metric} ${p.source.best.value.toFixed(4)})` : `\`${portableModelRef(p.source.model)}\``],
      ...(p.v.onnx ? ([['ONNX', '`onnx/model.onnx`: the transformer with the weights above (inputs input_ids, attention_mask, token_type_ids; output last_hidden_state)']] as Array<[string, string]>) : []),
    ],
    usage,
    ...(training ? { training } : {}),
    results,
    mtebFiles: mteb.rows,
    notes: notesFor(p),
    exportedBy: commandLine(argv),
  };
  const files: Record<string, string | Uint8Array> = { 'README.md': modelCardMarkdown(card), ...mteb.files };
  const written = await exportSentenceTransformer(p.out, m, { pooling: p.pooling!, maxLength: p.maxLength, normalize: p.v.normalize, onnx: p.v.onnx, overwrite: p.v.overwrite, truncate: p.truncate, files });
  return { files: written.files, skipped: mteb.skipped, results: results.length };
}

async function exportAdapter(p: Plan & { source: RunSource }, argv: string[]): Promise<{ files: string[]; skipped: string[]; results: number }> {
  const s = p.source;
  const record = s.run.record;
  const base = p.v['base-model'] ?? localModelRef(record.model.id);
  const hubBase = p.v['base-model'] === undefined && !/^(shared|project|local):/.test(record.model.id) ? record.model.id : undefined;
  const adapterDir = join(s.runDir, 'adapter');
  let source: AdaptableModel | string;
  let loaded: LoadedModel | undefined;
  let evaluatedSha: string | undefined;
  if (existsSync(join(adapterDir, ADAPTER_WEIGHTS_FILE))) {
    // Written by the run's evaluation (lib/experiments/trained-evaluation.ts), which names the
    // weights it scored by sha256(base weights sha256 + "\n" + adapter file bytes).
    source = adapterDir;
    if (record.model.weightsSha256) evaluatedSha = createHash('sha256').update(`${record.model.weightsSha256}\n`).update(readFileSync(join(adapterDir, ADAPTER_WEIGHTS_FILE))).digest('hex');
  } else {
    loaded = await loadModel(base);
    const lora = s.lora!;
    addLora(loaded.model as AdaptableModel, { r: lora.r, alpha: lora.alpha, dropout: lora.dropout, targetModules: lora.targetModules, useRslora: lora.useRslora }, lora.seed ?? record.seed);
    restoreBestWeights(s.bestDir, loaded.model.params);
    source = loaded.model as AdaptableModel;
  }
  try {
    const evaluations = evaluatedSha ? evaluationsOf(p.resultsDir, evaluatedSha) : [];
    const mteb = mtebShipment(evaluations, p.resultsDir);
    const results = [...cardResults([s.run], s.resultsDir), ...cardResults(evaluations, p.resultsDir)];
    const lora = s.lora!;
    const card: ModelCardInput = {
      name: p.name,
      library: 'peft',
      ...(hubBase ? { baseModelHubId: hubBase } : {}),
      model: [
        ['base model', `\`${record.model.id}\`${record.model.weightsSha256 ? ` (weights sha256 \`${record.model.weightsSha256.slice(0, 16)}…\`)` : ''}`],
        ['adapters', `LoRA r ${lora.r}, α ${lora.alpha}, dropout ${lora.dropout}, on ${Array.isArray(lora.targetModules) ? lora.targetModules.join(', ') : (lora.targetModules ?? 'q_proj, v_proj')}`],
        ['weights from', `best dev checkpoint of run \`${record.runId}\` (step ${s.best.step}, ${s.best.metric} ${s.best.value.toFixed(4)})`],
      ],
      usage: [
        {
          title: 'PEFT (Python)',
          language: 'python',
          code: `from peft import PeftModel\nfrom transformers import AutoModelForCausalLM\n\nbase = AutoModelForCausalLM.from_pretrained("${hubBase ?? 'path/to/the/base/model'}")\nmodel = PeftModel.from_pretrained(base, "path/to/${p.name}")`,
        },
      ],
      training: cardTraining(s.run, s.resultsDir),
      results,
      mtebFiles: mteb.rows,
      notes: notesFor(p),
      exportedBy: commandLine(argv),
    };
    const files = await exportLoraAdapter(p.out, source, { ...(hubBase ? { baseModel: hubBase } : {}), overwrite: p.v.overwrite, files: { 'README.md': modelCardMarkdown(card), ...mteb.files } });
    return { files, skipped: mteb.skipped, results: results.length };
  } finally {
    loaded?.model.dispose();
  }
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const p = validateArguments(() => plan(argv));
  if (!p) {
    console.log(helpText(USAGE, OPTIONS, FOOTER));
    return EXIT.ok;
  }
  // Reading weights only: the cpu backend holds them; nothing is trained or run here.
  await initBackend('cpu');
  let done: { files: string[]; skipped: string[]; results: number };
  if (p.adapter) {
    done = await exportAdapter(p as Plan & { source: RunSource }, argv);
  } else {
    const from = p.source.kind === 'run' ? p.source.bestDir : p.source.model;
    const m = await loadModel(from);
    try {
      const chosen = exportPooling(m, p.pooling, p.source.kind === 'run' ? p.source.run.record.config.pooling : undefined);
      console.log(`export: pooling ${chosen.pooling} (${chosen.from})`);
      done = await exportEncoder({ ...p, pooling: chosen.pooling }, m, argv);
    } finally {
      m.model.dispose();
    }
  }
  console.log(`export: wrote ${p.out} (${p.adapter ? 'PEFT adapter' : 'sentence-transformers folder'}; ${done.files.length} files; ${done.results} evaluation numbers in README.md)`);
  for (const f of done.files) console.log(`  ${f}`);
  for (const s of done.skipped) console.log(`export: left out ${s}`);
  return EXIT.ok;
}

await runCommand('export', main);
