#!/usr/bin/env node
// Builds the cuda backend's addon with nvcc alone (no node-gyp, no network):
//
//   node native/build.mjs            compile every translation unit and link build/cuda/angle_cuda.node
//   node native/build.mjs --check    compile (-c) every unit whose headers are present, print the
//                                    exact reason for each one skipped; exit 1 only if a unit failed
//   node native/build.mjs --dev      build each standalone kernel benchmark native/dev/<name>.cu
//                                    (its own main, llm.c's habit) as build/cuda/dev/<name>
//   add --json for one JSON summary line (what the tests read), --jobs N for parallel compiles;
//   --check compiles the native/dev benchmarks too (summary field "dev")
//
// Environment: CUDA_HOME / CUDA_PATH (else `which nvcc`, else /usr/local/cuda); CUBLAS_INCLUDE_DIR
// and CUBLAS_LIB_DIR where cuBLAS lives outside the toolkit; NODE_INCLUDE_DIR (else the headers
// shipped beside the running node, <prefix>/include/node); ANGLE_CUDA_ARCH: "90" (default: sm_90
// machine code plus compute_90 PTX for newer GPUs), "native" (the visible GPU), or a list "80,90".
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const srcDir = join(here, 'src');
const devDir = join(here, 'dev');
const outDir = join(root, 'build', 'cuda');
const ADDON = join(outDir, 'angle_cuda.node');

/** Translation units that include cuBLAS headers; every other unit needs only the CUDA runtime. */
const NEEDS_CUBLAS = new Set(['matmul.cu']);
/** Translation units that include node_api.h. */
const NEEDS_NODE = new Set(['addon.cu']);

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  // The comment at the top of this file, which lists every option and variable.
  const head = readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1).filter((l) => l.startsWith('//'));
  console.log(head.map((l) => l.replace(/^\/\/ ?/, '')).join('\n'));
  process.exit(0);
}
const check = args.includes('--check');
const dev = args.includes('--dev');
const json = args.includes('--json');
const jobsArg = args.indexOf('--jobs');
const jobs = jobsArg >= 0 ? Math.max(1, Number(args[jobsArg + 1]) || 1) : Math.max(1, Math.min(cpus().length, 8));

function log(line) {
  if (!json) console.log(line);
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The CUDA toolkit root and its nvcc, or the reason none was found. */
function findCuda() {
  const tried = [];
  const candidates = [];
  for (const v of ['CUDA_HOME', 'CUDA_PATH']) if (process.env[v]) candidates.push([process.env[v], `$${v}`]);
  const onPath = which('nvcc');
  if (onPath) candidates.push([resolve(dirname(realpathSync(onPath)), '..'), 'nvcc on PATH']);
  candidates.push(['/usr/local/cuda', 'default location']);
  for (const [dir, how] of candidates) {
    const nvcc = join(dir, 'bin', 'nvcc');
    // A wrapper script on PATH (e.g. /usr/local/bin/nvcc) is not a toolkit root: require headers.
    if (existsSync(nvcc) && existsSync(join(dir, 'include', 'cuda_runtime.h'))) return { root: dir, nvcc, how };
    tried.push(`${nvcc} (${how})`);
  }
  return { reason: `nvcc not found (tried ${tried.join(', ')}); install the CUDA toolkit or set CUDA_HOME` };
}

function findFile(name, dirs) {
  for (const d of dirs) if (d && existsSync(join(d, name))) return d;
  return undefined;
}

const cuda = findCuda();
const nodeIncludeDirs = [process.env.NODE_INCLUDE_DIR, resolve(dirname(process.execPath), '..', 'include', 'node')].filter(Boolean);
const nodeInclude = findFile('node_api.h', nodeIncludeDirs);

function cublasIncludeDirs() {
  const dirs = [process.env.CUBLAS_INCLUDE_DIR];
  if (cuda.root) dirs.push(join(cuda.root, 'include'), join(cuda.root, 'targets', 'x86_64-linux', 'include'), join(cuda.root, 'targets', 'sbsa-linux', 'include'));
  dirs.push('/usr/include', '/usr/include/x86_64-linux-gnu');
  return dirs.filter(Boolean);
}
const cublasInclude = findFile('cublasLt.h', cublasIncludeDirs());

function cublasLibDirs() {
  const dirs = [process.env.CUBLAS_LIB_DIR];
  if (cuda.root) dirs.push(join(cuda.root, 'lib64'), join(cuda.root, 'lib'), join(cuda.root, 'targets', 'x86_64-linux', 'lib'), join(cuda.root, 'targets', 'sbsa-linux', 'lib'));
  dirs.push('/usr/lib/x86_64-linux-gnu', '/usr/lib64');
  return dirs.filter(Boolean);
}
const cublasLibDir = cublasLibDirs().find((d) => existsSync(join(d, 'libcublasLt.so')) || readdirSafe(d).some((f) => f.startsWith('libcublasLt.so')));

function readdirSafe(d) {
  try {
    return readdirSync(d);
  } catch {
    return [];
  }
}

function archFlags() {
  const spec = (process.env.ANGLE_CUDA_ARCH ?? '90').trim();
  if (spec === 'native') return ['-arch=native'];
  const list = spec.split(',').map((s) => s.trim()).filter(Boolean);
  const flags = [];
  for (const a of list) flags.push(`-gencode=arch=compute_${a},code=sm_${a}`);
  // PTX of the newest listed architecture, so a newer GPU can still JIT-compile the kernels.
  const top = list[list.length - 1];
  flags.push(`-gencode=arch=compute_${top},code=compute_${top}`);
  return flags;
}

function compileArgs(unit, obj, archs) {
  const a = ['-std=c++17', '-O3', '-Xcompiler', '-fPIC', '-Xcompiler', '-Wall', ...archs, '-DNODE_GYP_MODULE_NAME=angle_cuda', '-c', join(srcDir, unit), '-o', obj];
  if (nodeInclude) a.push('-I', nodeInclude);
  if (cublasInclude) a.push('-I', cublasInclude);
  return a;
}

function run(cmd, argv) {
  return new Promise((res) => {
    const p = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    p.on('error', (e) => res({ code: 127, out: String(e) }));
    p.on('close', (code) => res({ code: code ?? 1, out }));
  });
}

async function pool(items, n, f) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await f(items[i]);
      }
    }),
  );
  return results;
}

const units = readdirSync(srcDir).filter((f) => f.endsWith('.cu')).sort();
const devUnits = readdirSafe(devDir).filter((f) => f.endsWith('.cu')).sort();

/** The benchmarks of native/dev: each a whole program that includes the .cu files it measures. */
async function compileDev(outDir, archs, objectOnly) {
  return pool(devUnits, jobs, async (unit) => {
    if (!cuda.nvcc) return { unit, status: 'skipped', reason: cuda.reason };
    const out = join(outDir, unit.replace(/\.cu$/, objectOnly ? '.o' : ''));
    const t0 = Date.now();
    const r = await run(cuda.nvcc, ['-std=c++17', '-O3', '-Xcompiler', '-Wall', ...archs, ...(objectOnly ? ['-c'] : []), join(devDir, unit), '-o', out]);
    const seconds = (Date.now() - t0) / 1000;
    if (r.code !== 0) return { unit, status: 'failed', seconds, output: r.out.trim() };
    return { unit, status: 'compiled', seconds, obj: out, warnings: r.out.trim() || undefined };
  });
}

function skipReason(unit) {
  if (!cuda.nvcc) return cuda.reason;
  if (NEEDS_NODE.has(unit) && !nodeInclude) return `node_api.h not found under ${nodeIncludeDirs.join(', ')} (set NODE_INCLUDE_DIR)`;
  if (NEEDS_CUBLAS.has(unit) && !cublasInclude) return `cublasLt.h not found under ${cublasIncludeDirs().join(', ')} (install cuBLAS or set CUBLAS_INCLUDE_DIR)`;
  return undefined;
}

async function compileAll(objDir, archs) {
  return pool(units, jobs, async (unit) => {
    const reason = skipReason(unit);
    if (reason) return { unit, status: 'skipped', reason };
    const obj = join(objDir, unit.replace(/\.cu$/, '.o'));
    const t0 = Date.now();
    const r = await run(cuda.nvcc, compileArgs(unit, obj, archs));
    const seconds = (Date.now() - t0) / 1000;
    if (r.code !== 0) return { unit, status: 'failed', seconds, output: r.out.trim() };
    return { unit, status: 'compiled', seconds, obj, warnings: r.out.trim() || undefined };
  });
}

function report(results) {
  for (const r of results) {
    if (r.status === 'compiled') log(`  compiled ${r.unit} (${r.seconds.toFixed(1)} s)${r.warnings ? `\n${r.warnings}` : ''}`);
    else if (r.status === 'skipped') log(`  skipped  ${r.unit}: ${r.reason}`);
    else log(`  FAILED   ${r.unit} (${r.seconds.toFixed(1)} s):\n${r.output}`);
  }
}

async function main() {
  if (check) {
    log(`native/build.mjs --check: nvcc ${cuda.nvcc ?? 'absent'}${cuda.how ? ` (${cuda.how})` : ''}; node headers ${nodeInclude ?? 'absent'}; cuBLAS headers ${cublasInclude ?? 'absent'}`);
    const tmp = mkdtempSync(join(tmpdir(), 'angle-cuda-check-'));
    try {
      // One real architecture is enough to type-check and compile device code.
      const results = await compileAll(tmp, ['-gencode=arch=compute_90,code=sm_90']);
      report(results);
      const devResults = await compileDev(tmp, ['-gencode=arch=compute_90,code=sm_90'], true);
      report(devResults.map((r) => ({ ...r, unit: `dev/${r.unit}` })));
      const failed = [...results, ...devResults].filter((r) => r.status === 'failed').length;
      const summary = {
        nvcc: cuda.nvcc ?? null,
        nodeInclude: nodeInclude ?? null,
        cublasInclude: cublasInclude ?? null,
        units: results.map(({ unit, status, reason, output }) => ({ unit, status, reason, output })),
        dev: devResults.map(({ unit, status, reason, output }) => ({ unit, status, reason, output })),
      };
      if (json) console.log(JSON.stringify(summary));
      else log(`check: ${[...results, ...devResults].filter((r) => r.status === 'compiled').length} compiled, ${[...results, ...devResults].filter((r) => r.status === 'skipped').length} skipped, ${failed} failed`);
      process.exitCode = failed ? 1 : 0;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return;
  }

  if (dev) {
    if (!cuda.nvcc) {
      console.error(`native/build.mjs: cannot build the benchmarks: ${cuda.reason}`);
      process.exit(2);
    }
    const binDir = join(outDir, 'dev');
    mkdirSync(binDir, { recursive: true });
    const devResults = await compileDev(binDir, archFlags(), false);
    report(devResults);
    if (devResults.some((r) => r.status !== 'compiled')) process.exit(1);
    for (const r of devResults) log(`built ${r.obj}`);
    return;
  }

  const missing = units.map((u) => [u, skipReason(u)]).filter(([, r]) => r);
  if (missing.length) {
    for (const [u, r] of missing) console.error(`native/build.mjs: cannot build ${u}: ${r}`);
    process.exit(2);
  }
  if (!cublasLibDir) {
    console.error(`native/build.mjs: libcublasLt.so not found under ${cublasLibDirs().join(', ')} (set CUBLAS_LIB_DIR)`);
    process.exit(2);
  }
  const archs = archFlags();
  const objDir = join(outDir, 'obj');
  mkdirSync(objDir, { recursive: true });
  log(`building ${ADDON}\n  nvcc ${cuda.nvcc}\n  node headers ${nodeInclude}\n  cuBLAS ${cublasInclude} / ${cublasLibDir}\n  ${archs.join(' ')}`);
  const t0 = Date.now();
  const results = await compileAll(objDir, archs);
  report(results);
  if (results.some((r) => r.status !== 'compiled')) {
    console.error('native/build.mjs: compilation failed');
    process.exit(1);
  }
  const tmpOut = `${ADDON}.tmp-${process.pid}`;
  const cudaLib = [join(cuda.root, 'lib64'), join(cuda.root, 'targets', 'x86_64-linux', 'lib')].find((d) => existsSync(d));
  const linkArgs = ['-shared', '-o', tmpOut, ...results.map((r) => r.obj), '--cudart', 'static', '-L', cublasLibDir, '-lcublasLt', `-Xlinker`, `-rpath,${cublasLibDir}`];
  if (cudaLib && cudaLib !== cublasLibDir) linkArgs.push('-L', cudaLib, '-Xlinker', `-rpath,${cudaLib}`);
  const link = await run(cuda.nvcc, linkArgs);
  if (link.code !== 0) {
    console.error(`native/build.mjs: link failed:\n${link.out}`);
    rmSync(tmpOut, { force: true });
    process.exit(1);
  }
  renameSync(tmpOut, ADDON);
  const hash = createHash('sha256');
  for (const f of readdirSync(srcDir).sort()) hash.update(f).update(readFileSync(join(srcDir, f)));
  const nvccVersion = spawnSync(cuda.nvcc, ['--version'], { encoding: 'utf8' }).stdout.trim().split('\n').pop();
  writeFileSync(
    join(outDir, 'build-info.json'),
    JSON.stringify({ addon: ADDON, sources: hash.digest('hex'), nvcc: nvccVersion, arch: archs, cublasLib: cublasLibDir, node: process.version, builtAt: new Date().toISOString() }, null, 2) + '\n',
  );
  log(`built ${ADDON} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

main().catch((e) => {
  console.error(`native/build.mjs: ${e.stack ?? e}`);
  process.exit(1);
});
