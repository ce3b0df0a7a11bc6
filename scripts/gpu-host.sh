#!/usr/bin/env bash
# Runs on a bare GPU host (CUDA toolkit, no Node, no network) from the folder scripts/gpu-pack.mjs
# made (bundle/): unpacks Node, builds the cuda addon, runs the GPU test suite, golden parity on
# cuda and the training-step benchmark beside PyTorch, writing each report into <outdir>; or, with
# --notebooks, runs the notebooks headless (the project's runner, scripts/notebooks/) with a preset.
#
#   bash bundle/gpu-host.sh <outdir> [--only build,tests,parity,bench] [--tests cuda-kernels,...]
#                                    [--bench-configs 32x64,128x64,256x32] [--bench-steps N] [--bundled-node]
#   bash bundle/gpu-host.sh <outdir> --gpu-check    (npm run gpu-check; GPU_CHECK_ARGS="--budget-s ..." passes options)
#   bash bundle/gpu-host.sh <outdir> --notebooks [names...] [--preset paper|rehearsal|smoke]
#                                    [--hf-cache <dir>] [--data <dir>] [--model <dir>] [--llm-model <dir>]
#                                    [--shared <dir>] [--timeout-per-cell <s>] [--only build,notebooks] [--bundled-node]
#
# Every step is time-bounded (STEP_TIMEOUT_<STEP> seconds, defaults below; 0 = no bound, the
# notebooks' default) and the script goes on after a failing step; it exits non-zero at the end if
# any step failed. A later call with --only tests,parity,bench reuses the addon an earlier
# --only build left in bundle/app/build/. BENCH_PROFILE=1 adds the benchmark's --profile
# (host/device split, per-kernel device time).
# Outputs of the GPU checks: build.txt, gpu-tests.txt, parity.txt, bench.txt, bench.json,
# cuda-train-step-<date>.json, summary.txt (8 files at most, for the device tool).
#
# --notebooks: no names = every notebook, in order; the preset defaults to paper. It unpacks
# notebooks-kit.tar.xz (tslab's executor, TypeScript, plotly.js, ..., the shared models/) into app/.
# The addon is built first when it is missing and nvcc is there (then the paper preset's
# ANGLE_BACKEND=auto picks cuda; without it, the best CPU backend and a warning). The host has no
# network: HF_HUB_OFFLINE=1 unless set, models and data come from a Hugging Face cache copied in
# (--hf-cache <dir>, i.e. HF_HUB_CACHE; or HF_HOME) or local folders (--data: ANGLE_DATA_DIR,
# --model: ANGLE_MODEL, --llm-model: ANGLE_LLM_MODEL). The smoke and rehearsal presets read
# --shared <dir>, else the bundle's own golden set, models and data copies (app/golden, app/models,
# app/data). Outputs: notebooks.txt (the
# runner's log, with what every cell printed), notebooks/<name>.ipynb (executed), results/ (what the
# notebooks write: ANGLE_RESULTS_DIR), summary.txt.
set -u -o pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
usage="usage: bash gpu-host.sh <outdir> [--only build,tests,parity,bench] [--tests name,...] [--bench-configs 32x64,...] [--bench-steps N] [--bundled-node]
       bash gpu-host.sh <outdir> --notebooks [names...] [--preset paper|rehearsal|smoke] [--hf-cache <dir>] [--data <dir>] [--model <dir>] [--llm-model <dir>] [--shared <dir>] [--timeout-per-cell <s>]
       bash gpu-host.sh <outdir> --gpu-check [--bundled-node]   (GPU_CHECK_ARGS: options of npm run gpu-check)"
if [ $# -lt 1 ] || [[ "$1" == --* ]]; then
  echo "$usage" >&2
  exit 2
fi
out="$(mkdir -p "$1" && cd "$1" && pwd)"
shift
only=""
tests=""
bench_configs="32x64,128x64,256x32"
bench_steps="${BENCH_STEPS:-20}"
bundled_node=0
notebooks=0
gpu_check=0
nb_names=()
preset="paper"
hf_cache=""
nb_data=""
nb_model=""
nb_llm_model=""
nb_shared=""
cell_timeout=""
# An option's value: present and not another option.
need() { if [ $# -lt 2 ] || [[ "$2" == --* ]]; then echo "gpu-host.sh: $1 needs a value" >&2; echo "$usage" >&2; exit 2; fi; }
while [ $# -gt 0 ]; do
  case "$1" in
    --only) need "$@"; only="$2"; shift 2 ;;
    --tests) need "$@"; tests="$2"; shift 2 ;;
    --bench-configs) need "$@"; bench_configs="$2"; shift 2 ;;
    --bench-steps) need "$@"; bench_steps="$2"; shift 2 ;;
    --bundled-node) bundled_node=1; shift ;;
    --gpu-check) gpu_check=1; shift ;;
    --notebooks)
      notebooks=1; shift
      while [ $# -gt 0 ] && [[ "$1" != --* ]]; do nb_names+=("$1"); shift; done ;;
    --preset) need "$@"; preset="$2"; shift 2 ;;
    --hf-cache) need "$@"; hf_cache="$2"; shift 2 ;;
    --data) need "$@"; nb_data="$2"; shift 2 ;;
    --model) need "$@"; nb_model="$2"; shift 2 ;;
    --llm-model) need "$@"; nb_llm_model="$2"; shift 2 ;;
    --shared) need "$@"; nb_shared="$2"; shift 2 ;;
    --timeout-per-cell) need "$@"; cell_timeout="$2"; shift 2 ;;
    *) echo "gpu-host.sh: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
  esac
done
if [ "$notebooks" = 0 ]; then
  for o in "$hf_cache" "$nb_data" "$nb_model" "$nb_llm_model" "$nb_shared" "$cell_timeout"; do
    if [ -n "$o" ]; then echo "gpu-host.sh: --hf-cache, --data, --model, --llm-model, --shared and --timeout-per-cell go with --notebooks" >&2; exit 2; fi
  done
fi
# Folders given on the command line, made absolute: the steps run from the app folder.
abs() { if [ -d "$1" ]; then (cd "$1" && pwd); else echo "gpu-host.sh: $2 $1 is not a directory" >&2; exit 2; fi; }
[ -n "$hf_cache" ] && { hf_cache="$(abs "$hf_cache" --hf-cache)" || exit 2; }
[ -n "$nb_data" ] && { nb_data="$(abs "$nb_data" --data)" || exit 2; }
[ -n "$nb_shared" ] && { nb_shared="$(abs "$nb_shared" --shared)" || exit 2; }
# A model is a local folder or (with a Hub cache) a Hub id: made absolute only when it is a folder.
[ -n "$nb_model" ] && [ -d "$nb_model" ] && nb_model="$(cd "$nb_model" && pwd)"
[ -n "$nb_llm_model" ] && [ -d "$nb_llm_model" ] && nb_llm_model="$(cd "$nb_llm_model" && pwd)"
# --only given: exactly those steps. Otherwise the GPU checks, or with --notebooks the addon build
# when it is missing, then the notebooks.
build_if_missing=0
if [ -z "$only" ]; then
  if [ "$gpu_check" = 1 ]; then only="gpu-check"
  elif [ "$notebooks" = 1 ]; then only="build,notebooks"; build_if_missing=1; else only="build,tests,parity,bench"; fi
elif [ "$notebooks" = 1 ] && [[ ",$only," != *",notebooks,"* ]]; then
  only="$only,notebooks"
fi

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

# Node: the one on PATH if it is >= 20 (unless --bundled-node), else the one shipped beside this script.
if [ "$bundled_node" = 1 ] || ! command -v node >/dev/null 2>&1 || [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 20 ]; then
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

# What the user set, before the GPU checks' defaults below fill these in (the notebooks get the
# user's values only: a preset's own model and data must not be overridden by the golden set's).
user_model="${ANGLE_MODEL:-}"; user_llm_model="${ANGLE_LLM_MODEL:-}"; user_data="${ANGLE_DATA_DIR:-}"; user_golden="${ANGLE_GOLDEN_DIR:-}"
golden="$(ls -d "$app"/golden/*/ 2>/dev/null | head -1)"; golden="${golden%/}"
export ANGLE_GOLDEN_DIR="${ANGLE_GOLDEN_DIR:-$golden}"
export ANGLE_MODEL="${ANGLE_MODEL:-$golden/model}"
export ANGLE_DATA_DIR="${ANGLE_DATA_DIR:-$app/data}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}"

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
  addon="${ANGLE_CUDA_ADDON:-$app/build/cuda/angle_cuda.node}"
  if [ "$build_if_missing" = 1 ] && [ -f "$addon" ]; then
    say "skip build: the addon is there ($addon)"
  elif [ "$build_if_missing" = 1 ] && ! command -v nvcc >/dev/null 2>&1 && [ -z "${CUDA_HOME:-}${CUDA_PATH:-}" ] && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    say "skip build: no nvcc (CUDA_HOME, PATH, /usr/local/cuda); the notebooks' auto backend will run on the CPU"
  else
    step build "${STEP_TIMEOUT_BUILD:-480}" "$out/build.txt" node native/build.mjs
  fi
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

if want gpu-check; then
  # npm run gpu-check (scripts/gpu-check.ts; docs/gpu.md, "The device route"): it builds the addon
  # itself and writes gpu-check.json, gpu-check.md and logs/<step>.txt into <outdir>; with this
  # script's summary.txt that is 8 files. Its console goes to a temporary file (its logs hold it all).
  gc_env=()
  if [ "$ext" = js ]; then
    # The rehearsal step's tokenizers are the kit's models/: the bundle's app/ is the shared folder.
    if [ -f "$here/notebooks-kit.tar.xz" ] && tar -xJf "$here/notebooks-kit.tar.xz" -C "$here"; then say "unpacked $(basename "$here/notebooks-kit.tar.xz") into app/"; fi
    [ -z "${ANGLE_SHARED_DIR:-}" ] && gc_env=(ANGLE_SHARED_DIR="$app")
  fi
  gc_log="$(mktemp "${TMPDIR:-/tmp}/gpu-check.XXXXXX")"
  step gpu-check "${STEP_TIMEOUT_GPU_CHECK:-590}" "$gc_log" env "${gc_env[@]}" "${runner[@]}" "scripts/gpu-check.$ext" --out "$out" ${GPU_CHECK_ARGS:-}
  grep -E '^gpu-check:' "$gc_log" | sed 's/^/    /' | tee -a "$summary"
  rm -f "$gc_log"
fi

if want notebooks; then
  nb_ok=1
  # Unpacked on every call (about a second here): a bundle packed again over an unpacked one gets its own kit.
  if [ "$ext" = js ]; then
    kit="$here/notebooks-kit.tar.xz"
    if [ ! -f "$kit" ]; then
      say "FAIL notebooks: $kit is missing (pack again with scripts/gpu-pack.mjs)"; failed=$((failed + 1)); nb_ok=0
    elif ! tar -xJf "$kit" -C "$here"; then
      say "FAIL notebooks: cannot unpack $kit into $here (GNU tar with xz, and a writable bundle folder, are needed)"; failed=$((failed + 1)); nb_ok=0
    else
      say "unpacked $(basename "$kit") into app/"
    fi
  fi
  if [ "$nb_ok" = 1 ]; then
    # The notebooks' environment: the user's ANGLE_* values and the flags, never the GPU checks' defaults.
    nb_env=(env -u ANGLE_MODEL -u ANGLE_LLM_MODEL -u ANGLE_DATA_DIR -u ANGLE_GOLDEN_DIR)
    [ -n "${nb_model:-$user_model}" ] && nb_env+=("ANGLE_MODEL=${nb_model:-$user_model}")
    [ -n "${nb_llm_model:-$user_llm_model}" ] && nb_env+=("ANGLE_LLM_MODEL=${nb_llm_model:-$user_llm_model}")
    [ -n "${nb_data:-$user_data}" ] && nb_env+=("ANGLE_DATA_DIR=${nb_data:-$user_data}")
    [ -n "$user_golden" ] && nb_env+=("ANGLE_GOLDEN_DIR=$user_golden")
    [ -n "$hf_cache" ] && nb_env+=("HF_HUB_CACHE=$hf_cache")
    nb_env+=("ANGLE_RESULTS_DIR=${ANGLE_RESULTS_DIR:-$out/results}")
    nb_args=("${nb_names[@]}" --preset "$preset" --out "$out/notebooks" --dir "$app/notebooks" --verbose)
    [ "$ext" = ts ] && nb_args+=(--build)
    [ -n "$cell_timeout" ] && nb_args+=(--timeout-per-cell "$cell_timeout")
    if [ -n "$nb_shared" ]; then
      nb_args+=(--shared "$nb_shared")
    elif [ "$preset" != paper ] && [ -z "${ANGLE_SHARED_DIR:-}" ] && [ "$ext" = js ]; then
      # The bundle's golden/, data/ and models/ form a small shared folder (the parity subset of the data).
      nb_args+=(--shared "$app")
      say "$preset preset: the bundle's own golden/, models/ and data/ ($(ls "$app/data" 2>/dev/null | tr '\n' ' ')); pass --shared <dir> for the rest"
    fi
    say "notebooks: ${nb_names[*]:-all}, preset $preset; HF_HUB_OFFLINE=$HF_HUB_OFFLINE${hf_cache:+, HF_HUB_CACHE=$hf_cache}; results in $out/results"
    step notebooks "${STEP_TIMEOUT_NOTEBOOKS:-0}" "$out/notebooks.txt" "${nb_env[@]}" "${runner[@]}" "scripts/notebooks/cli.$ext" "${nb_args[@]}"
    grep -E '^\[[0-9]+/[0-9]+\] [^ ]+: (ok|FAILED)|^backend: |infeasible' "$out/notebooks.txt" | sed 's/^/    /' | tee -a "$summary"
  fi
fi

say "gpu-host.sh: $failed step(s) failed"
[ "$failed" -eq 0 ]
