#!/usr/bin/env node
// Packs what a bare GPU host (CUDA, no Node, no network) needs to build the cuda backend and run
// its test suite, golden parity and benchmark, into one git-ignored folder, bundle/:
//
//   bundle/node-v20.20.2-linux-x64.xz   the official Node binary distribution (from $ANGLE_SHARED_DIR/device, else ../shared/device)
//   bundle/gpu-host.sh                  the script to run on the host (see scripts/gpu-host.sh)
//   bundle/app/                         the project compiled to JavaScript with tsc (lib, GPU tests, bench, parity command),
//                                       native/ sources, the tfjs gradient bundle, the pruned node_modules it imports,
//                                       the golden set and the evaluation data the parity command reads
//
//   node scripts/gpu-pack.mjs [--no-data] [--golden <dir>] [--data <dir>]
//
// Prints the size of each part and the total, and fails above 60 MiB.
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
//    it the package root (lib/util/package-root.ts looks for the name).
const tsconfig = {
  extends: join(root, 'tsconfig.json'),
  compilerOptions: { noEmit: false, outDir: app, rootDir: root, declaration: false, sourceMap: false, noUnusedLocals: false },
  include: [
    join(root, 'lib'),
    join(root, 'test', 'cuda-*.test.ts'),
    join(root, 'test', 'fixtures', 'cuda', '*.ts'),
    join(root, 'test', 'helpers'),
    join(root, 'bench', 'cuda-*.ts'),
    join(root, 'scripts', 'parity.ts'),
  ],
};
const tsconfigPath = join(out, 'tsconfig.pack.json');
writeFileSync(tsconfigPath, JSON.stringify(tsconfig, null, 2));
const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfigPath], { encoding: 'utf8' });
if (tsc.status !== 0) die(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
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
  node_modules: duBytes(join(app, 'node_modules')),
  code: duBytes(app) - duBytes(join(app, 'node_modules')) - duBytes(join(app, 'golden')) - duBytes(join(app, 'data')),
  golden: duBytes(join(app, 'golden')),
  data: duBytes(join(app, 'data')),
};
const total = duBytes(out);
writeFileSync(
  join(out, 'MANIFEST.json'),
  JSON.stringify({ commit: git.stdout.trim() || null, dirty, packedAt: new Date().toISOString(), golden: relative(out, goldenOut), data: withData ? DATA_SUBSETS : [], bytes: { ...parts, total }, packages: [...seen].sort() }, null, 2) + '\n',
);
for (const [k, v] of Object.entries(parts)) console.log(`  ${k.padEnd(13)} ${mib(v)}`);
console.log(`bundle/ ${mib(total)} (limit ${mib(LIMIT)}), commit ${git.stdout.trim().slice(0, 12)}${dirty ? ' + uncommitted changes' : ''}`);
console.log('on the GPU host: bash bundle/gpu-host.sh <outdir> [--only build,tests,parity,bench]');
if (total > LIMIT) die(`bundle is ${mib(total)}, over the ${mib(LIMIT)} limit (try --no-data)`);
