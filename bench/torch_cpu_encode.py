"""PyTorch peer of bench/cpu-encode.ts: a BERT forward in plain PyTorch on the CPU, [CLS] pooling.

HF transformers is not a Debian package, so this is BertModel's eval-mode forward written out
(transformers' modeling_bert.py with the eager attention path):

    h0 = LayerNorm(word[ids] + type[types] + position[0..T))
    per layer: scores = q k^T / sqrt(d) + (1 - mask) * finfo(float32).min, ctx = softmax(scores) v,
               a = LayerNorm(dense(ctx) + h), h' = LayerNorm(dense(gelu(dense(a))) + a)   (erf GELU)

reading the weights from the model directory's model.safetensors (HF naming, or the original
checkpoint naming with the `bert.` prefix and LayerNorm.gamma/beta) with numpy, so it needs
nothing beyond Debian's python3-torch. The token rows come from the TypeScript side (our
tokenizer), already in the benchmark's order (longest first); this script pads each batch to its
longest row, exactly as the encoder does.

    /usr/bin/python3 bench/torch_cpu_encode.py --model DIR --rows rows.json --batch 64 \
        --threads 2 [--repeat 3] --out cls.f32 [--check-golden GOLDEN_DIR]

Prints one JSON line: seconds (the fastest of --repeat passes), passSeconds, cpuPerWallSecond,
sentences, tokens (real), paddedTokens, peakRssMiB, threads, torch.
--check-golden runs the golden set's forward.json batch instead and prints the largest difference
of [CLS] and last_hidden_state to forward.safetensors (the peer checked against HF transformers).

    /usr/bin/python3 bench/torch_cpu_encode.py --model DIR --export-onnx model.onnx

writes this forward as an ONNX graph with torch.onnx.export (opset 17, tracing one batch; batch and
sequence dynamic; inputs input_ids, attention_mask, token_type_ids as int64, output
last_hidden_state), the reference graph bench/cpu-encode.ts runs on ONNX Runtime beside ours
(engine "ort-torch-export"), and prints one JSON line: path, bytes, seconds, nodes, torch, onnx.
"""

import argparse
import json
import math
import resource
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        arr = np.frombuffer(data, dtype=DTYPES[info["dtype"]], count=(end - start) // np.dtype(DTYPES[info["dtype"]]).itemsize, offset=base + start)
        out[name] = torch.from_numpy(arr.astype(np.float32, copy=True).reshape(info["shape"])) if info["dtype"] in ("F32", "F16") else torch.from_numpy(arr.copy().reshape(info["shape"]))
    return out


def canonical(name):
    for prefix in ("bert.", "model."):
        if name.startswith(prefix):
            name = name[len(prefix) :]
            break
    return name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")


class Bert:
    def __init__(self, model_dir, weights_file=None):
        with open(f"{model_dir}/config.json") as f:
            cfg = json.load(f)
        self.hidden = cfg["hidden_size"]
        self.heads = cfg["num_attention_heads"]
        self.layers = cfg["num_hidden_layers"]
        self.eps = cfg.get("layer_norm_eps", 1e-12)
        if cfg.get("hidden_act", "gelu") != "gelu":
            raise SystemExit(f"torch_cpu_encode.py: only erf GELU is written out, config has {cfg['hidden_act']}")
        self.w = {canonical(k): v for k, v in read_safetensors(weights_file or f"{model_dir}/model.safetensors").items()}

    def p(self, name):
        return self.w[name]

    def ln(self, x, prefix):
        return F.layer_norm(x, (self.hidden,), self.p(prefix + ".weight"), self.p(prefix + ".bias"), self.eps)

    def dense(self, x, prefix):
        return F.linear(x, self.p(prefix + ".weight"), self.p(prefix + ".bias"))

    def forward(self, ids, mask, types):
        B, T = ids.shape
        d = self.hidden // self.heads
        pos = torch.arange(T)
        h = self.p("embeddings.word_embeddings.weight")[ids] + self.p("embeddings.token_type_embeddings.weight")[types]
        h = h + self.p("embeddings.position_embeddings.weight")[pos][None]
        h = self.ln(h, "embeddings.LayerNorm")
        ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for l in range(self.layers):
            pre = f"encoder.layer.{l}."
            split = lambda x: x.view(B, T, self.heads, d).transpose(1, 2)
            q = split(self.dense(h, pre + "attention.self.query"))
            k = split(self.dense(h, pre + "attention.self.key"))
            v = split(self.dense(h, pre + "attention.self.value"))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d) + ext
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(B, T, self.hidden)
            a = self.ln(self.dense(ctx, pre + "attention.output.dense") + h, pre + "attention.output.LayerNorm")
            inter = F.gelu(self.dense(a, pre + "intermediate.dense"))
            h = self.ln(self.dense(inter, pre + "output.dense") + a, pre + "output.LayerNorm")
        return h


class BertModule(torch.nn.Module):
    """The forward above as a module, so torch.onnx.export traces it (weights become initializers)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert.forward(input_ids, attention_mask, token_type_ids)


def export_onnx(model, path):
    import onnx

    t0 = time.perf_counter()
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    types = torch.zeros_like(ids)
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"}, "token_type_ids": {0: "batch", 1: "sequence"}, "last_hidden_state": {0: "batch", 1: "sequence"}}
    with torch.inference_mode(False), torch.no_grad():
        torch.onnx.export(BertModule(model), (ids, mask, types), path, input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"], dynamic_axes=dyn, opset_version=17, do_constant_folding=True)
    seconds = time.perf_counter() - t0
    m = onnx.load(path, load_external_data=False)
    import os

    print(json.dumps({"path": path, "bytes": os.path.getsize(path), "seconds": seconds, "nodes": len(m.graph.node), "torch": torch.__version__, "onnx": onnx.__version__}))


def pad(rows, pad_id=0):
    T = max(len(r["ids"]) for r in rows)
    ids = torch.full((len(rows), T), pad_id, dtype=torch.long)
    types = torch.zeros((len(rows), T), dtype=torch.long)
    mask = torch.zeros((len(rows), T), dtype=torch.long)
    for i, r in enumerate(rows):
        n = len(r["ids"])
        ids[i, :n] = torch.tensor(r["ids"])
        types[i, :n] = torch.tensor(r["typeIds"])
        mask[i, :n] = 1
    return ids, mask, types


def blas():
    """The BLAS torch calls: Debian's torch uses the libblas.so.3 alternative (OpenBLAS with libopenblas0-pthread)."""
    import os

    info = torch.__config__.show()
    kind = info.split("BLAS_INFO=")[-1].split(",")[0] if "BLAS_INFO=" in info else "unknown"
    lib = "/usr/lib/x86_64-linux-gnu/libblas.so.3"
    return f"{kind}: {os.path.realpath(lib)}" if os.path.exists(lib) else kind


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def check_golden(golden):
    import os

    with open(f"{golden}/forward.json") as f:
        fj = json.load(f)
    g = read_safetensors(f"{golden}/forward.safetensors")
    out = {}
    for label, weights in (("hf", None), ("hub-naming", f"{golden}/model-hub-naming.safetensors")):
        if weights and not os.path.exists(weights):
            continue
        model = Bert(f"{golden}/model", weights)
        with torch.inference_mode():
            h = model.forward(g["input_ids"].long(), g["attention_mask"].long(), g["token_type_ids"].long())
        out[label] = {
            "last_hidden_state": float((h - g["last_hidden_state"]).abs().max()),
            "pool_cls": float((h[:, 0] - g["pool_cls"]).abs().max()),
        }
    print(json.dumps({"golden": golden, "sentences": len(fj["sentences"]), "maxAbsDiff": out}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model")
    ap.add_argument("--rows")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--check-golden")
    ap.add_argument("--export-onnx")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.check_golden:
        check_golden(a.check_golden)
        return
    model = Bert(a.model)
    if a.export_onnx:
        export_onnx(model, a.export_onnx)
        return
    with open(a.rows) as f:
        rows = json.load(f)["rows"]
    batches = [pad(rows[i : i + a.batch]) for i in range(0, len(rows), a.batch)]
    dim = model.hidden
    cls = np.zeros((len(rows), dim), dtype=np.float32)
    passes = []
    cpu = 0.0
    with torch.inference_mode():
        model.forward(*batches[0])  # warm-up: the first (longest) batch
        for _ in range(a.repeat):
            c0 = time.process_time()
            t0 = time.perf_counter()
            outs = [model.forward(*b)[:, 0] for b in batches]
            passes.append(time.perf_counter() - t0)
            cpu = max(cpu, (time.process_time() - c0) / passes[-1])
    seconds = min(passes)
    r = 0
    for o in outs:
        cls[r : r + o.shape[0]] = o.numpy()
        r += o.shape[0]
    if a.out:
        cls.tofile(a.out)
    tokens = sum(len(x["ids"]) for x in rows)
    padded = sum(b[0].numel() for b in batches)
    print(json.dumps({"seconds": seconds, "passSeconds": passes, "cpuPerWallSecond": cpu, "sentences": len(rows), "tokens": tokens, "paddedTokens": padded, "peakRssMiB": peak_rss_mib(), "threads": torch.get_num_threads(), "torch": torch.__version__, "blas": blas()}))


if __name__ == "__main__":
    sys.exit(main())
