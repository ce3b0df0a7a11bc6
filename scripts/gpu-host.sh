#!/usr/bin/env bash
# Runs on a bare GPU host (CUDA toolkit, no Node, no network) from the folder scripts/gpu-pack.mjs
# made (bundle/): unpacks Node, builds the cuda addon, runs the GPU test suite, golden parity on
# cuda and the training-step benchmark beside PyTorch, writing each report into <outdir>.
#
#   bash bundle/gpu-host.sh <outdir> [--only build,tests,parity,bench] [--tests cuda-kernels,...]
#                                    [--bench-configs 32x64,128x64,256x32] [--bench-steps N]
#
# Every step is time-bounded (STEP_TIMEOUT_<STEP> seconds, defaults below) and the script goes on
# after a failing step; it exits non-zero at the end if any step failed. A later call with
# --only tests,parity,bench reuses the addon an earlier --only build left in bundle/app/build/.
# BENCH_PROFILE=1 adds the benchmark's --profile (host/device split, per-kernel device time).
# Outputs: build.txt, gpu-tests.txt, parity.txt, bench.txt, bench.json, cuda-train-step-<date>.json,
# summary.txt (8 files at most, for the device tool).
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 1 ] || [[ "$1" == --* ]]; then
  echo "usage: bash gpu-host.sh <outdir> [--only build,tests,parity,bench] [--tests name,...] [--bench-configs 32x64,...] [--bench-steps N]" >&2
  exit 2
fi
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
only="build,tests,parity,bench"
tests=""
bench_configs="32x64,128x64,256x32"
bench_steps="${BENCH_STEPS:-20}"
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="$2"; shift 2 ;;
    --tests) tests="$2"; shift 2 ;;
    --bench-configs) bench_configs="$2"; shift 2 ;;
    --bench-steps) bench_steps="$2"; shift 2 ;;
    *) echo "gpu-host.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

# Bundle layout (app/ holds compiled JavaScript) or a repository checkout (TypeScript via tsx).
if [ -f "$here/app/package.json" ]; then
  app="$here/app"; ext=js; runner=(node)
elif [ -f "$here/../package.json" ] && [ -d "$here/../node_modules/tsx" ]; then
  app="$(cd "$here/.." && pwd)"; ext=ts; runner=(node --import tsx)
else
  echo "gpu-host.sh: run me from the bundle (bundle/gpu-host.sh, made by node scripts/gpu-pack.mjs) or from a checkout with node_modules" >&2
  exit 2
fi

summary="$out/summary.txt"
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
failed=0

# Node: the one on PATH if it is >= 20, else the tarball shipped beside this script.
if ! command -v node >/dev/null 2>&1 || [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 20 ]; then
  xz_file="$(ls "$here"/node-v*-linux-x64.xz 2>/dev/null | head -1)"
  if [ -z "$xz_file" ]; then say "FAIL node: no node on PATH and no node-v*-linux-x64.xz beside $0"; exit 1; fi
  node_dir="$(mktemp -d "${TMPDIR:-/tmp}/angle-node.XXXXXX")"
  mkdir -p "$node_dir/bin"
  # Either an official tarball (node-vX-linux-x64.tar.xz layout) or the bare executable, xz-compressed.
  if [ "$(xz -dc "$xz_file" 2>/dev/null | head -c 4 | od -An -c | tr -d ' ')" = "177ELF" ]; then
    xz -dc "$xz_file" > "$node_dir/bin/node" && chmod +x "$node_dir/bin/node" || { say "FAIL node: cannot decompress $xz_file (is xz installed?)"; exit 1; }
  elif ! tar -xJf "$xz_file" -C "$node_dir" --strip-components=1; then
    say "FAIL node: cannot unpack $xz_file (neither a tar.xz nor an xz-compressed executable; is xz installed?)"; exit 1
  fi
  export PATH="$node_dir/bin:$PATH"
fi
# Node-API headers for the addon build when the Node in use has none beside it (the bare executable).
if [ -z "${NODE_INCLUDE_DIR:-}" ] && [ -f "$here/node-include/node_api.h" ]; then export NODE_INCLUDE_DIR="$here/node-include"; fi
say "node $(node --version) at $(command -v node); app $app"
if command -v nvidia-smi >/dev/null 2>&1; then
  { nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -3; } | sed 's/^/gpu: /' | tee -a "$summary"
else
  say "gpu: nvidia-smi not found"
fi

golden="$(ls -d "$app"/golden/*/ 2>/dev/null | head -1)"; golden="${golden%/}"
export ANGLE_GOLDEN_DIR="${ANGLE_GOLDEN_DIR:-$golden}"
export ANGLE_MODEL="${ANGLE_MODEL:-$golden/model}"
export ANGLE_DATA_DIR="${ANGLE_DATA_DIR:-$app/data}"
export HF_HUB_OFFLINE=1

want() { [[ ",$only," == *",$1,"* ]]; }

# step NAME TIMEOUT LOGFILE COMMAND...: runs with a time bound, logs, records PASS/FAIL.
step() {
  local name="$1" limit="$2" log="$3"; shift 3
  local t0=$SECONDS
  (cd "$app" && timeout --kill-after=20 "$limit" "$@") > "$log" 2>&1
  local rc=$?
  local dt=$((SECONDS - t0))
  if [ $rc -eq 0 ]; then
    say "PASS $name (${dt} s) -> $(basename "$log")"
  else
    failed=$((failed + 1))
    [ $rc -eq 124 ] && say "FAIL $name: timed out after ${limit} s -> $(basename "$log")" || say "FAIL $name: exit $rc (${dt} s) -> $(basename "$log")"
    tail -n 15 "$log" | sed 's/^/    /' | tee -a "$summary"
  fi
}

if want build; then
  step build "${STEP_TIMEOUT_BUILD:-480}" "$out/build.txt" node native/build.mjs
fi

if want tests; then
  files=()
  if [ -n "$tests" ]; then
    IFS=, read -ra names <<< "$tests"
    for n in "${names[@]}"; do files+=("test/${n%.test.$ext}.test.$ext"); done
  else
    # The emulated-addon suites test the TypeScript layer without a GPU (npm test runs them); on the
    # host they would only spend device time.
    for f in "$app"/test/cuda-*.test."$ext"; do
      case "$(basename "$f")" in cuda-emulated*) continue ;; esac
      files+=("test/$(basename "$f")")
    done
  fi
  step tests "${STEP_TIMEOUT_TESTS:-540}" "$out/gpu-tests.txt" "${runner[@]}" --test --test-reporter=spec --test-concurrency=1 "${files[@]}"
  grep -E '^# (tests|pass|fail|skipped)' "$out/gpu-tests.txt" | sed 's/^/    /' | tee -a "$summary"
fi

if want parity; then
  # Exact fp32 matmuls: the golden forward tolerance (1e-5) is below TF32's rounding.
  step parity "${STEP_TIMEOUT_PARITY:-540}" "$out/parity.txt" env ANGLE_CUDA_MATMUL=fp32 "${runner[@]}" "scripts/parity.$ext" --golden "$app/golden" --data "$ANGLE_DATA_DIR" --backend cuda
  grep -E '^parity:' "$out/parity.txt" | sed 's/^/    /' | tee -a "$summary"
fi

if want bench; then
  torch_json="$out/bench-torch.json"
  py="${PYTHON:-python3}"
  step bench-torch "${STEP_TIMEOUT_BENCH_TORCH:-300}" "$out/bench.txt" "$py" bench/torch_train_step.py --configs "$bench_configs" --steps "$bench_steps" --out "$torch_json"
  mv "$out/bench.txt" "$out/bench-torch.txt" 2>/dev/null
  step bench-ours "${STEP_TIMEOUT_BENCH_OURS:-420}" "$out/bench.txt" "${runner[@]}" "bench/cuda-train-step.$ext" --configs "$bench_configs" --steps "$bench_steps" --torch "$torch_json" --out "$out/bench.json" --results-dir "$out" ${BENCH_PROFILE:+--profile}
  cat "$out/bench-torch.txt" >> "$out/bench.txt" 2>/dev/null && rm -f "$out/bench-torch.txt" "$torch_json"
  grep -E '^(config|  )' "$out/bench.txt" | head -20 | tee -a "$summary"
fi

say "gpu-host.sh: $failed step(s) failed"
[ "$failed" -eq 0 ]
