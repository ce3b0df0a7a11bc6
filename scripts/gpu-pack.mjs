#!/usr/bin/env node
// Packs what a bare GPU host (CUDA, no Node, no network) needs to build the cuda backend, run its
// test suite, golden parity and benchmark, and run the notebooks headless, into one git-ignored
// folder, bundle/:
//
//   bundle/node-v20.20.2-linux-x64.xz   the official Node binary distribution (from $ANGLE_SHARED_DIR/device, else ../shared/device)
//   bundle/gpu-host.sh                  the script to run on the host (see scripts/gpu-host.sh)
//   bundle/app/                         the project compiled to JavaScript with tsc (lib with its declarations, GPU tests,
//                                       bench, the parity and data commands, the headless notebook runner), native/
//                                       sources, the tfjs gradient bundle, the pruned node_modules lib imports, the
//                                       golden set and the evaluation data the parity command reads, notebooks/,
//                                       dist/index.js (what the notebooks import: a re-export of app/lib) and the
//                                       committed run records under results/ that notebooks read
//   bundle/notebooks-kit.tar.xz         what only the notebooks need, xz-compressed (4.7 MiB for 23.3 MiB): the tslab
//                                       executor and TypeScript compiler the runner's kernel uses, @types/node for
//                                       type-checking cells, plotly.js, arquero, tfjs-backend-wasm, and the shared
//                                       folder's models/ (tokenizers, toy decoder) for the smoke and rehearsal
//                                       presets; gpu-host.sh --notebooks unpacks it into app/
//
//   node scripts/gpu-pack.mjs [--no-data] [--golden <dir>] [--data <dir>] [--allow-type-errors]
//
// Prints the size of each part and the total, and fails above 60 MiB (the device tool carries at
// most 64 MiB per call). Dev-only packages stay out (onnxruntime-node, @huggingface/transformers,
// openai, playwright-core, tsx, typescript, tslab's zeromq and rollup): the headless runner needs
// tslab's converter and executor only, and tslab loads zeromq lazily, for a Jupyter connection.
// --allow-type-errors packs a tree whose type check fails (tsc emits the JavaScript anyway) and
// records the error count in MANIFEST.json; without it a type error stops the pack.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, copyFileSync, chmodSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'bundle');
const app = join(out, 'app');
const LIMIT = 60 * 2 ** 20;

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const shared = process.env.ANGLE_SHARED_DIR ?? resolve(root, '..', 'shared');
const nodeXz = join(shared, 'device', 'node-v20.20.2-linux-x64.xz');
const goldenDir = resolve(opt('--golden') ?? process.env.ANGLE_GOLDEN_DIR ?? join(shared, 'golden', 'bert-tiny-seed1234'));
const dataDir = resolve(opt('--data') ?? process.env.ANGLE_DATA_DIR ?? join(shared, 'data'));
const withData = !args.includes('--no-data');
const allowTypeErrors = args.includes('--allow-type-errors');

function die(msg) {
  console.error(`gpu-pack: ${msg}`);
  process.exit(1);
}

function duBytes(p) {
  if (!existsSync(p)) return 0;
  const s = statSync(p);
  if (!s.isDirectory()) return s.size;
  return readdirSync(p).reduce((n, f) => n + duBytes(join(p, f)), 0);
}

const mib = (b) => `${(b / 2 ** 20).toFixed(1)} MiB`;

if (!existsSync(nodeXz)) die(`${nodeXz} not found (set ANGLE_SHARED_DIR to the folder holding device/node-v20.20.2-linux-x64.xz)`);
if (!existsSync(join(goldenDir, 'forward.json'))) die(`${goldenDir} is not a golden set (no forward.json); pass --golden <dir>`);

rmSync(out, { recursive: true, force: true });
mkdirSync(app, { recursive: true });

// 1. The TypeScript the GPU run executes, compiled to JavaScript beside a package.json that makes
//    it the package root (lib/util/package-root.ts looks for the name). Declarations too: the
//    notebook kernel type-checks each cell against the library's .d.ts, as Jupyter's tslab does.
const tsconfig = {
  extends: join(root, 'tsconfig.json'),
  compilerOptions: { noEmit: false, outDir: app, rootDir: root, declaration: true, sourceMap: false, noUnusedLocals: false },
  include: [
    join(root, 'lib'),
    join(root, 'test', 'cuda-*.test.ts'),
    join(root, 'test', 'fixtures', 'cuda', '*.ts'),
    join(root, 'test', 'helpers'),
    join(root, 'bench', 'cuda-*.ts'),
    join(root, 'scripts', 'parity.ts'),
    // npm run gpu-check (gpu-host.sh --gpu-check): its steps run each configuration in a process of its own.
    join(root, 'scripts', 'gpu-check.ts'),
    join(root, 'scripts', 'gpu-check', '*.ts'),
    join(root, 'scripts', 'data.ts'),
    // The headless notebook runner: cli.ts imports runner.ts, which forks kernel.ts by file name.
    join(root, 'scripts', 'notebooks', 'cli.ts'),
    join(root, 'scripts', 'notebooks', 'kernel.ts'),
  ],
};
const tsconfigPath = join(out, 'tsconfig.pack.json');
writeFileSync(tsconfigPath, JSON.stringify(tsconfig, null, 2));
const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfigPath], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
let typeErrors = 0;
if (tsc.status !== 0) {
  typeErrors = (tsc.stdout.match(/error TS\d+/g) ?? []).length;
  // Exit status 2 with errors listed: type errors, JavaScript emitted. Anything else: tsc itself failed.
  if (!allowTypeErrors || tsc.status !== 2 || typeErrors === 0 || !existsSync(join(app, 'lib', 'index.js'))) {
    die(`tsc failed:\n${tsc.stdout}${tsc.stderr}${allowTypeErrors ? '' : '(--allow-type-errors packs the emitted JavaScript anyway)'}`);
  }
  console.warn(`gpu-pack: ${typeErrors} type error(s), packed anyway (--allow-type-errors):\n${tsc.stdout.split('\n').filter((l) => /error TS\d+/.test(l)).join('\n')}`);
}
rmSync(tsconfigPath);
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: pkg.name, version: pkg.version, private: true, type: 'module', description: 'GPU-host bundle of angle-notebooks (scripts/gpu-pack.mjs)' }, null, 2) + '\n');
cpSync(join(root, 'test', 'fixtures', 'cuda', 'kernels.json'), join(app, 'test', 'fixtures', 'cuda', 'kernels.json'));

// 2. Native sources and their build script; the tfjs gradient bundle (needs esbuild to make, so it
//    travels ready-made).
cpSync(join(root, 'native'), join(app, 'native'), { recursive: true });
const gradients = readdirSync(join(root, 'build')).find((f) => /^tfjs-gradients-.*\.cjs$/.test(f));
if (!gradients) die('build/tfjs-gradients-*.cjs is missing: run `npm run build` (or any test) once first');
mkdirSync(join(app, 'build'), { recursive: true });
copyFileSync(join(root, 'build', gradients), join(app, 'build', gradients));
for (const f of readdirSync(join(root, 'bench'))) if (/^torch_.*\.py$|^cuda-.*\.json$/.test(f)) copyFileSync(join(root, 'bench', f), join(app, 'bench', f));

// 3. node_modules: the run-time dependency closure of what lib/ imports, without types, maps and
//    docs; the tfjs packages keep only the Node entry point (their other bundles are browser builds).
// protobufjs: the encoders import the ONNX exporter (lib/models/onnx); onnxruntime-node itself stays out (288 MB,
// optional, loaded only on cpu/wasm hosts).
const ROOTS = ['@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-cpu', '@huggingface/tokenizers', 'simple-statistics', 'hyparquet', 'protobufjs'];
const MAIN_ONLY = new Set(['@tensorflow/tfjs-core', '@tensorflow/tfjs-backend-cpu']);
const seen = new Set();
const queue = [...ROOTS];
while (queue.length) {
  const name = queue.shift();
  if (seen.has(name) || name.startsWith('@types/') || name === '@webgpu/types') continue;
  const dir = join(root, 'node_modules', name);
  if (!existsSync(dir)) die(`node_modules/${name} is missing (run npm ci)`);
  seen.add(name);
  const pj = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  for (const d of Object.keys(pj.dependencies ?? {})) queue.push(d);
  const dest = join(app, 'node_modules', name);
  if (MAIN_ONLY.has(name)) {
    mkdirSync(join(dest, dirname(pj.main)), { recursive: true });
    copyFileSync(join(dir, 'package.json'), join(dest, 'package.json'));
    copyFileSync(join(dir, pj.main), join(dest, pj.main));
  } else {
    cpSync(dir, dest, {
      recursive: true,
      filter: (src) => !/\.(map|d\.ts|d\.mts|d\.cts|md|markdown)$/i.test(src) && !/[\\/](test|tests|docs|example|examples|\.github)([\\/]|$)/.test(relative(dir, src)),
    });
  }
}

// 3b. What only the notebooks need, staged and then xz-compressed into one file: its JavaScript and
//     declaration files compress about 5:1 (4.7 MiB for 23.3 MiB when first packed), and
//     uncompressed they would not fit the limit beside the rest.
//     Each entry: the package and which of its files travel ('main': package.json and the main
//     file; a function: a filter on the path inside the package; undefined: all but docs/maps/tests).
const kitStage = join(out, '.notebooks-kit');
const KIT = {
  tslab: (p) => p === 'package.json' || /^dist\/[^/]+\.js$/.test(p),
  '@tslab/typescript-for-tslab': (p) => p === 'package.json' || p === 'lib/typescript.js' || /^lib\/lib\.[^/]+\.d\.ts$/.test(p),
  semver: undefined,
  '@types/node': (p) => p === 'package.json' || p.endsWith('.d.ts'),
  'undici-types': (p) => p === 'package.json' || p.endsWith('.d.ts'),
  'plotly.js-dist-min': 'main',
  arquero: (p) => p === 'package.json' || p.startsWith('src/'),
  '@uwdata/flechette': (p) => p === 'package.json' || p.startsWith('dist/') && p.endsWith('.cjs'),
  acorn: (p) => p === 'package.json' || /^dist\/acorn\.(js|mjs)$/.test(p),
  '@tensorflow/tfjs-backend-wasm': (p) => p === 'package.json' || p === 'dist/tf-backend-wasm.node.js' || /^dist\/[^/]+\.wasm$/.test(p),
};
// The kit's packages' own dependencies that stay out: the Jupyter wire protocol (zeromq, loaded only
// when tslab serves Jupyter), tslab's command line and bundler, and the wasm backend's emscripten
// types. (tslab's own @types/node 18 is served by the project's @types/node, packed above.)
const KIT_LEFT_OUT = new Set(['zeromq', 'commander', 'rollup', '@rollup/plugin-commonjs', '@rollup/plugin-node-resolve', '@rollup/plugin-replace', '@types/emscripten']);
const kitPackages = [];
rmSync(kitStage, { recursive: true, force: true });
for (const [name, keep] of Object.entries(KIT)) {
  const dir = join(root, 'node_modules', name);
  if (!existsSync(dir)) die(`node_modules/${name} is missing (run npm ci)`);
  const pj = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const missing = Object.keys(pj.dependencies ?? {}).filter((d) => !(d in KIT) && !seen.has(d) && !KIT_LEFT_OUT.has(d));
  if (missing.length) die(`notebooks kit: ${name} depends on ${missing.join(', ')}, which is neither packed nor listed as left out (KIT_LEFT_OUT)`);
  const dest = join(kitStage, 'app', 'node_modules', name);
  const generic = (p) => !/\.(map|d\.ts|d\.mts|d\.cts|md|markdown)$/i.test(p) && !/(^|\/)(test|tests|docs|example|examples|\.github|bin)(\/|$)/.test(p);
  const filter = keep === 'main' ? (p) => p === 'package.json' || p === pj.main.replace(/^\.\//, '') : (keep ?? generic);
  cpSync(dir, dest, { recursive: true, filter: (src) => {
    const p = relative(dir, src).split('\\').join('/');
    return p === '' || statSync(src).isDirectory() || filter(p);
  } });
  kitPackages.push(`${name}@${pj.version}`);
}
// Models of the shared folder's models/ that the presets read: with app/golden and app/data they
// make app/ a small shared folder for the smoke and rehearsal presets on a host that has none
// (gpu-host.sh passes --shared app then). The rehearsal's tokenizers (lib/experiments/rehearsal/
// models.ts) and the smoke preset's toy decoder (ANGLE_LLM_MODEL); not the GloVe subset, whose
// SentEval data the bundle does not carry.
const KIT_MODELS = ['bert-base-uncased-tokenizer', 'gpt2-tokenizer', 'llama2c-stories260K'];
const kitModels = KIT_MODELS.filter((d) => existsSync(join(shared, 'models', d)));
for (const d of kitModels) cpSync(join(shared, 'models', d), join(kitStage, 'app', 'models', d), { recursive: true });
const kitTar = join(out, 'notebooks-kit.tar.xz');
const tar = spawnSync('tar', ['-cJf', kitTar, '-C', kitStage, 'app'], { encoding: 'utf8', env: { ...process.env, XZ_OPT: '-9' } });
if (tar.status !== 0) die(`tar -cJf ${kitTar} failed (GNU tar and xz are needed): ${tar.stderr || tar.error?.message}`);
const kitUnpacked = duBytes(kitStage);
rmSync(kitStage, { recursive: true, force: true });

// 3c. The notebooks and what they import: `../dist/index.js`, here a re-export of the compiled
//     lib/ (so one copy of the library serves the tests, the commands and the notebooks).
cpSync(join(root, 'notebooks'), join(app, 'notebooks'), { recursive: true, filter: (src) => !/(^|[\\/])\.ipynb_checkpoints([\\/]|$)/.test(src) });
mkdirSync(join(app, 'dist'), { recursive: true });
writeFileSync(join(app, 'dist', 'index.js'), "// The notebooks import ../dist/index.js; in the GPU bundle that is the compiled lib/ (scripts/gpu-pack.mjs).\nexport * from '../lib/index.js';\n");
writeFileSync(join(app, 'dist', 'index.d.ts'), "export * from '../lib/index.js';\n");
// The committed run records some notebooks read beside their own (`readResults({ resultsDir:
// "../results" })`, e.g. notebook 00's AnglE-BERT STS-B row): git's tracked files under results/
// only, never the git-ignored runs of this checkout (smoke runs, executed notebooks).
const tracked = spawnSync('git', ['-C', root, 'ls-files', '-z', 'results'], { encoding: 'utf8' });
if (tracked.status !== 0) die(`git ls-files results failed (the committed run records are packed from git's index): ${tracked.stderr || tracked.error?.message}`);
const committedResults = tracked.stdout.split('\0').filter(Boolean);
for (const f of committedResults) {
  if (!existsSync(join(root, f))) continue; // deleted in the working tree
  mkdirSync(dirname(join(app, f)), { recursive: true });
  copyFileSync(join(root, f), join(app, f));
}

// 4. Reference material for `npm run parity` and the golden tests.
const goldenOut = join(app, 'golden', goldenDir.split('/').pop());
cpSync(goldenDir, goldenOut, { recursive: true, filter: (src) => !src.endsWith('model-hub-naming.safetensors') });
// The decoder's golden set (llama2.c, about 2 MB) beside it, for the parity suite `decoder` on cuda.
const decoderGolden = join(shared, 'golden', 'llama2c-stories260K');
if (existsSync(join(decoderGolden, 'golden.json'))) cpSync(decoderGolden, join(app, 'golden', 'llama2c-stories260K'), { recursive: true });
const DATA_SUBSETS = ['sts', 'stsb', 'sick', 'flickr30k', 'mrpc'];
if (withData) {
  for (const d of DATA_SUBSETS) if (existsSync(join(dataDir, d))) cpSync(join(dataDir, d), join(app, 'data', d), { recursive: true });
}

// 5. Node and the host script.
copyFileSync(nodeXz, join(out, 'node-v20.20.2-linux-x64.xz'));
// The shared Node is a bare xz-compressed executable without headers; the addon build needs
// Node-API's four C headers (ABI-stable across Node versions), so they travel beside it.
const nodeHeaders = ['node_api.h', 'node_api_types.h', 'js_native_api.h', 'js_native_api_types.h'];
const nodeHeaderDir = [process.env.NODE_INCLUDE_DIR, resolve(dirname(process.execPath), '..', 'include', 'node')].find((d) => d && nodeHeaders.every((h) => existsSync(join(d, h))));
if (!nodeHeaderDir) die(`Node-API headers (${nodeHeaders.join(', ')}) not found beside ${process.execPath}; set NODE_INCLUDE_DIR`);
mkdirSync(join(out, 'node-include'), { recursive: true });
for (const h of nodeHeaders) copyFileSync(join(nodeHeaderDir, h), join(out, 'node-include', h));
copyFileSync(join(root, 'scripts', 'gpu-host.sh'), join(out, 'gpu-host.sh'));
chmodSync(join(out, 'gpu-host.sh'), 0o755);

const git = spawnSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
const dirty = spawnSync('git', ['-C', root, 'status', '--porcelain'], { encoding: 'utf8' }).stdout.trim() !== '';
const parts = {
  node: duBytes(join(out, 'node-v20.20.2-linux-x64.xz')),
  notebooks_kit: duBytes(kitTar),
  node_modules: duBytes(join(app, 'node_modules')),
  code: duBytes(app) - duBytes(join(app, 'node_modules')) - duBytes(join(app, 'golden')) - duBytes(join(app, 'data')),
  golden: duBytes(join(app, 'golden')),
  data: duBytes(join(app, 'data')),
};
const total = duBytes(out);
writeFileSync(
  join(out, 'MANIFEST.json'),
  JSON.stringify(
    {
      commit: git.stdout.trim() || null,
      dirty,
      typeErrors,
      packedAt: new Date().toISOString(),
      golden: relative(out, goldenOut),
      data: withData ? DATA_SUBSETS : [],
      bytes: { ...parts, total, notebooks_kit_unpacked: kitUnpacked },
      packages: [...seen].sort(),
      notebooksKit: { file: relative(out, kitTar), packages: kitPackages, models: kitModels },
    },
    null,
    2,
  ) + '\n',
);
for (const [k, v] of Object.entries(parts)) console.log(`  ${k.padEnd(13)} ${mib(v)}`);
console.log(`bundle/ ${mib(total)} (limit ${mib(LIMIT)}), commit ${git.stdout.trim().slice(0, 12)}${dirty ? ' + uncommitted changes' : ''}`);
console.log(`  (notebooks kit: ${mib(kitUnpacked)} unpacked)`);
console.log('on the GPU host: bash bundle/gpu-host.sh <outdir> [--only build,tests,parity,bench]');
console.log('                 bash bundle/gpu-host.sh <outdir> --notebooks [names...] --preset paper|rehearsal|smoke [--hf-cache <dir>]');
if (total > LIMIT) die(`bundle is ${mib(total)}, over the ${mib(LIMIT)} limit (try --no-data)`);
