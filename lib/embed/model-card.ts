/**
 * The model card (`README.md`) of an exported model: YAML front matter as the Hugging Face Hub
 * reads it (library_name, pipeline_tag, tags, base_model), then how to load the folder, what it
 * computes, how it was trained, what it scored and where each number comes from, and the paper to
 * cite. It only formats: every value comes from the caller (scripts/export.ts reads them from the
 * run records), so the card says nothing the records do not.
 *
 * Numbers are printed as the records hold them (Spearman as ρ × 100 where the papers print it
 * so), each row naming its record file relative to the results folder, its run id and date, so a
 * reader can open the record; the provenance table gives each record's code version (git commit,
 * dirty or not), Node, platform, backend and packages.
 */

/** AnglE's citation, as the authors ask for it (SeanLee97/AnglE, docs/notes/citation.rst); title and authors as printed in papers/000_c0fdd0968b088fcd.txt. */
export const ANGLE_BIBTEX = `@article{li2023angle,
  title={AnglE-optimized Text Embeddings},
  author={Li, Xianming and Li, Jing},
  journal={arXiv preprint arXiv:2309.12871},
  year={2023}
}`;

/** The conference version, from the paper's first footnote (papers/000_c0fdd0968b088fcd.txt). */
export const ANGLE_CONFERENCE_NOTE = 'The conference version is "AoE: Angle-optimized Embeddings for Semantic Textual Similarity", ACL 2024.';

export interface CardProvenance {
  gitCommit?: string | null;
  gitDirty?: boolean | null;
  node?: string;
  platform?: string;
  device?: string;
  backend?: string;
  packages?: Record<string, string>;
}

/** One record the card quotes. */
export interface CardRecord {
  /** The record file, relative to the results folder (results/<experiment>/<run-id>.json). */
  file: string;
  runId: string;
  /** ISO date the run finished. */
  finishedAt: string;
  provenance: CardProvenance;
}

export interface CardResult {
  metric: string;
  value: number;
  /** What it was measured on (data set and split, protocol). */
  on: string;
  record: CardRecord;
}

export interface CardTraining {
  record: CardRecord;
  experiment: string;
  recipe?: string;
  /** The model the run started from (a Hub id or a portable path) and its weights' sha256. */
  startedFrom: { id: string; weightsSha256?: string };
  seed: number;
  /** The trainer configuration as recorded, flattened to dotted keys. */
  config: Array<[string, string]>;
  data: Array<{ id: string; split: string; rows: number; sha256?: string }>;
  /** Which weights were kept, e.g. "best dev spearman (step 60)". */
  selected?: string;
  steps?: number;
  wallSeconds: number;
}

export interface ModelCardInput {
  name: string;
  /** 'sentence-transformers' for a model folder, 'peft' for a LoRA adapter. */
  library: 'sentence-transformers' | 'peft';
  /** The base model as a Hub id, when it is one (front matter base_model). */
  baseModelHubId?: string;
  /** Rows of the "Model" table (property, value). */
  model: Array<[string, string]>;
  /** Usage snippets: title, language, code. */
  usage: Array<{ title: string; language: string; code: string; note?: string }>;
  training?: CardTraining;
  results: CardResult[];
  /** Result files in MTEB's layout shipped in the folder (paths inside it), with their main scores. */
  mtebFiles: Array<{ path: string; task: string; mainScore: number; record: CardRecord }>;
  /** Things a reader must know first (e.g. that a smoke run's numbers mean nothing). */
  notes: string[];
  /** How the folder was made (the command), for the last section. */
  exportedBy: string;
}

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function table(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');
}

function yamlString(s: string): string {
  return /^[A-Za-z0-9._/-]+$/.test(s) ? s : JSON.stringify(s);
}

function provenanceLine(p: CardProvenance): string {
  const commit = p.gitCommit ? `${p.gitCommit.slice(0, 12)}${p.gitDirty ? ' (uncommitted changes)' : ''}` : 'unknown commit';
  return [commit, p.node ? `Node ${p.node}` : '', p.platform ?? '', p.device ?? '', p.backend ? `backend ${p.backend}` : ''].filter(Boolean).join(', ');
}

/** The README.md of an exported model (see the file comment). */
export function modelCardMarkdown(c: ModelCardInput): string {
  const tags = c.library === 'peft' ? ['peft', 'lora', 'angle'] : ['sentence-transformers', 'sentence-similarity', 'feature-extraction', 'angle'];
  if (c.usage.some((u) => u.language === 'js')) tags.push('transformers.js');
  const front = [
    '---',
    `library_name: ${c.library}`,
    ...(c.library === 'sentence-transformers' ? ['pipeline_tag: sentence-similarity'] : []),
    'tags:',
    ...tags.map((t) => `- ${t}`),
    ...(c.baseModelHubId ? [`base_model: ${yamlString(c.baseModelHubId)}`] : []),
    '---',
  ].join('\n');
  const out: string[] = [front, '', `# ${c.name}`, ''];
  out.push(
    c.library === 'peft'
      ? 'A LoRA adapter in PEFT\'s layout, trained with this project\'s reproduction of AnglE (angle-optimized text embeddings) and its neighbours.'
      : 'A sentence embedding model in sentence-transformers\' layout, trained or exported with this project\'s reproduction of AnglE (angle-optimized text embeddings) and its neighbours.',
    '',
  );
  for (const n of c.notes) out.push(`> **Note.** ${n}`, '');

  out.push('## Usage', '');
  for (const u of c.usage) {
    out.push(`### ${u.title}`, '', '```' + u.language, u.code.trimEnd(), '```', '');
    if (u.note) out.push(u.note, '');
  }

  out.push('## Model', '', table(['property', 'value'], c.model), '');

  if (c.training) {
    const t = c.training;
    out.push('## Training', '');
    out.push(
      `Run \`${t.record.runId}\` of experiment \`${t.experiment}\`${t.recipe ? `, recipe \`${t.recipe}\`` : ''}, seed ${t.seed}: ` +
        `${t.steps !== undefined ? `${t.steps} steps, ` : ''}${t.wallSeconds.toFixed(1)} s. Record: \`${t.record.file}\`.`,
      '',
    );
    out.push(`Started from \`${t.startedFrom.id}\`${t.startedFrom.weightsSha256 ? ` (weights sha256 \`${t.startedFrom.weightsSha256.slice(0, 16)}…\`)` : ''}.${t.selected ? ` Exported weights: ${t.selected}.` : ''}`, '');
    if (t.data.length) out.push(table(['data', 'split', 'rows', 'sha256'], t.data.map((d) => [d.id, d.split, String(d.rows), d.sha256 ? `${d.sha256.slice(0, 16)}…` : ''])), '');
    if (t.config.length) out.push('The configuration as recorded:', '', table(['setting', 'value'], t.config.map(([k, v]) => [`\`${k}\``, v])), '');
  }

  out.push('## Evaluation', '');
  if (c.results.length === 0) {
    out.push('No evaluation record of these weights was found in the results folder.', '');
  } else {
    out.push(
      'Every number below was computed by this project\'s code and is copied from the run record named beside it (results folder relative paths).',
      '',
      table(
        ['metric', 'value', 'on', 'record', 'date'],
        c.results.map((r) => [r.metric, Number.isInteger(r.value) ? String(r.value) : r.value.toFixed(4), r.on, `\`${r.record.file}\``, r.record.finishedAt.slice(0, 10)]),
      ),
      '',
    );
  }
  if (c.mtebFiles.length) {
    out.push(
      '### MTEB',
      '',
      "Result files in MTEB's layout (`mteb/<model>/<revision>/<Task>.json`, as `mteb` reads them), written by the evaluation runs named beside them:",
      '',
      table(['file', 'task', 'main_score (cosine Spearman)', 'record'], c.mtebFiles.map((f) => [`\`${f.path}\``, f.task, f.mainScore.toFixed(6), `\`${f.record.file}\``])),
      '',
    );
  }
  const records = new Map<string, CardRecord>();
  for (const r of [...(c.training ? [c.training.record] : []), ...c.results.map((x) => x.record), ...c.mtebFiles.map((f) => f.record)]) records.set(r.file, r);
  if (records.size) {
    out.push('### Provenance', '', table(['record', 'run', 'code and machine'], [...records.values()].map((r) => [`\`${r.file}\``, r.runId, provenanceLine(r.provenance)])), '');
    const packages = new Map<string, string>();
    for (const r of records.values()) for (const [k, v] of Object.entries(r.provenance.packages ?? {})) packages.set(k, v);
    if (packages.size) out.push(`Packages: ${[...packages].map(([k, v]) => `${k} ${v}`).join(', ')}.`, '');
  }

  out.push('## Citation', '', 'AnglE (Li & Li), the method this project reproduces:', '', '```bibtex', ANGLE_BIBTEX, '```', '', ANGLE_CONFERENCE_NOTE, '');
  out.push('## How this folder was made', '', '```sh', c.exportedBy, '```', '');
  return out.join('\n');
}
