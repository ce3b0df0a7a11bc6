"""PyTorch peer of bench/train-memory.ts: what PyTorch keeps for the backward pass of one training step.

Plain PyTorch (Debian's python3-torch; no transformers), fp32, the models written out as HF transformers
computes them in eager mode:

  bert   BertModel: embeddings (word + position + token type) -> LayerNorm -> dropout; per layer separate
         q/k/v Linear, scores = q k^T / sqrt(d) + additive mask, softmax, dropout, @ v, output dense,
         dropout, residual LayerNorm, intermediate dense, erf GELU, output dense, dropout, residual
         LayerNorm. Every parameter trains. Loss: CoSENT (AnglE's cosine objective, tau 20) on the [CLS]
         rows of a zigzag batch of pairs.
  llama  LlamaForCausalLM's decoder without the LM head: RMSNorm (in float32), q/k/v/o projections,
         rotary embeddings (half rotation), causal softmax attention, SwiGLU MLP, residuals; the base
         frozen (requires_grad False) with PEFT-style LoRA on all seven linear layers of every block:
         y = x W^T + (alpha / r) * B(A(dropout(x))). Loss: CoSENT on the last token of a zigzag batch.

Dropout is torch.native_dropout, which keeps a bool mask (1 byte per element) as PyTorch's CUDA dropout
does (CPU F.dropout would keep a float mask instead).

What is counted: every tensor autograd saves for backward, seen through torch.autograd.graph.saved_tensors_hooks
during the forward pass, each storage once (a tensor saved by several nodes, or a view of one that is,
counts once), parameters excluded (they are counted as 4 bytes of weight plus 12 of gradient and AdamW
moments per trainable parameter, and their storage bytes per frozen one, by the caller). The model is run
at --layers depths (e.g. 1 and 2) on the real batch shape, so the per-layer bytes are exact and a full-depth
model projects as fixed + layers x per-layer.

    /usr/bin/python3 bench/torch_train_memory.py --model bert --sequences 64 --length 64 --layers 1,2
    /usr/bin/python3 bench/torch_train_memory.py --model llama --sequences 16 --length 45 --layers 1,2 --lora-r 32

Prints one JSON line: saved bytes per depth, bytes per layer, parameter counts, peak RSS, versions.
"""

import argparse
import json
import math
import resource
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                 max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12, hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1)
LLAMA_7B = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32,
                rms_norm_eps=1e-5, rope_theta=10000.0)


def dropout(x, p, training):
    if not training or p == 0:
        return x
    return torch.native_dropout(x, p, True)[0]


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attn_out = nn.Linear(h, h)
        self.ln1 = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.inter = nn.Linear(h, c["intermediate_size"])
        self.out = nn.Linear(c["intermediate_size"], h)
        self.ln2 = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.p, self.pa = c["hidden_dropout_prob"], c["attention_probs_dropout_prob"]

    def forward(self, x, mask):
        b, t, h = x.shape
        d = h // self.heads
        split = lambda y: y.view(b, t, self.heads, d).transpose(1, 2)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + mask
        ctx = dropout(scores.softmax(-1), self.pa, self.training) @ v
        ctx = ctx.transpose(1, 2).reshape(b, t, h)
        a = self.ln1(dropout(self.attn_out(ctx), self.p, self.training) + x)
        return self.ln2(dropout(self.out(F.gelu(self.inter(a))), self.p, self.training) + a)


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.word = nn.Embedding(c["vocab_size"], h)
        self.pos = nn.Embedding(c["max_position_embeddings"], h)
        self.token_type = nn.Embedding(c["type_vocab_size"], h)
        self.ln = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.layers = nn.ModuleList(BertLayer(c) for _ in range(c["num_hidden_layers"]))
        self.p = c["hidden_dropout_prob"]

    def forward(self, ids):
        t = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(t)) + self.token_type(torch.zeros_like(ids))
        x = dropout(self.ln(x), self.p, self.training)
        mask = (1.0 - torch.ones(ids.shape[0], 1, 1, t)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, mask)
        return x[:, 0]


class LoraLinear(nn.Module):
    """A frozen nn.Linear (no bias) plus PEFT's LoRA: B(A(dropout(x))) * alpha / r, B initialised to 0."""

    def __init__(self, inp, out, r, alpha, p):
        super().__init__()
        self.base = nn.Linear(inp, out, bias=False)
        self.base.weight.requires_grad_(False)
        self.a = nn.Linear(inp, r, bias=False)
        self.b = nn.Linear(r, out, bias=False)
        nn.init.zeros_(self.b.weight)
        self.scaling, self.p = alpha / r, p

    def forward(self, x):
        return self.base(x) + self.b(self.a(dropout(x, self.p, self.training))) * self.scaling


class RMSNorm(nn.Module):
    def __init__(self, h, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(h), requires_grad=False)
        self.eps = eps

    def forward(self, x):
        x32 = x.to(torch.float32)
        return self.weight * (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaLayer(nn.Module):
    def __init__(self, c, r, alpha, p):
        super().__init__()
        h, f = c["hidden_size"], c["intermediate_size"]
        self.heads = c["num_attention_heads"]
        lin = lambda i, o: LoraLinear(i, o, r, alpha, p)
        self.q, self.k, self.v, self.o = lin(h, h), lin(h, h), lin(h, h), lin(h, h)
        self.gate, self.up, self.down = lin(h, f), lin(h, f), lin(f, h)
        self.n1, self.n2 = RMSNorm(h, c["rms_norm_eps"]), RMSNorm(h, c["rms_norm_eps"])

    def forward(self, x, cos, sin, mask):
        b, t, h = x.shape
        d = h // self.heads
        n = self.n1(x)
        split = lambda y: y.view(b, t, self.heads, d).transpose(1, 2)
        q, k, v = split(self.q(n)), split(self.k(n)), split(self.v(n))
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        scores = q @ k.transpose(-1, -2) / math.sqrt(d) + mask
        ctx = (scores.softmax(-1, dtype=torch.float32).to(q.dtype) @ v).transpose(1, 2).reshape(b, t, h)
        x = x + self.o(ctx)
        n = self.n2(x)
        return x + self.down(F.silu(self.gate(n)) * self.up(n))


class Llama(nn.Module):
    def __init__(self, c, r, alpha, p):
        super().__init__()
        self.embed = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.embed.weight.requires_grad_(False)
        self.layers = nn.ModuleList(LlamaLayer(c, r, alpha, p) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        d = c["hidden_size"] // c["num_attention_heads"]
        self.inv_freq = 1.0 / (c["rope_theta"] ** (torch.arange(0, d, 2).float() / d))

    def forward(self, ids):
        t = ids.shape[1]
        x = self.embed(ids)
        freqs = torch.outer(torch.arange(t).float(), self.inv_freq)
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        mask = torch.full((t, t), torch.finfo(torch.float32).min).triu(1)[None, None]
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)[:, -1]


def cosent(emb, labels, tau=20.0):
    s = F.cosine_similarity(emb[0::2], emb[1::2], dim=-1) * tau
    diff = s[:, None] - s[None, :]
    diff = diff - (1 - (labels[:, None] < labels[None, :]).float()) * 1e12
    return torch.logsumexp(torch.cat([torch.zeros(1), diff.reshape(-1)]), 0)


def saved_bytes(model, ids, labels):
    """Bytes of the distinct non-parameter storages autograd saves for one forward, by dtype."""
    params = {p.storage().data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        s = t.storage()
        ptr = s.data_ptr()
        if ptr not in params and ptr not in seen:
            seen[ptr] = (str(t.dtype).replace("torch.", ""), s.nbytes())
        return t

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        loss = cosent(model(ids), labels)
    by_dtype = {}
    for dtype, n in seen.values():
        by_dtype[dtype] = by_dtype.get(dtype, 0) + n
    loss.backward()  # the saved graph is valid: the step really runs
    return sum(by_dtype.values()), by_dtype


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["bert", "llama"], required=True)
    ap.add_argument("--sequences", type=int, required=True, help="rows of the batch (2 x pairs)")
    ap.add_argument("--length", type=int, required=True, help="tokens per row")
    ap.add_argument("--layers", default="1,2", help="depths to run, comma separated (at least two)")
    ap.add_argument("--hidden", type=int, help="override the hidden size (tests)")
    ap.add_argument("--intermediate", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--vocab", type=int, help="vocabulary size (the LLaMA embedding is frozen and not saved; smaller is fine)")
    ap.add_argument("--lora-r", type=int, default=32)
    ap.add_argument("--lora-alpha", type=float, default=32.0)
    ap.add_argument("--lora-dropout", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.sequences % 2:
        print("torch_train_memory.py: --sequences must be even (zigzag pairs)", file=sys.stderr)
        sys.exit(2)
    depths = [int(v) for v in args.layers.split(",")]
    if len(depths) < 2 or len(set(depths)) != len(depths):
        print("torch_train_memory.py: --layers needs at least two different depths", file=sys.stderr)
        sys.exit(2)
    torch.set_num_threads(args.threads)
    base = dict(BERT_BASE if args.model == "bert" else LLAMA_7B)
    for key, arg in (("hidden_size", args.hidden), ("intermediate_size", args.intermediate), ("num_attention_heads", args.heads), ("vocab_size", args.vocab)):
        if arg:
            base[key] = arg
    g = torch.Generator().manual_seed(99)
    ids = torch.randint(1000, base["vocab_size"], (args.sequences, args.length), generator=g)
    labels = torch.randint(0, 6, (args.sequences // 2,), generator=g).float()
    result = dict(model=args.model, sequences=args.sequences, length=args.length, config=base, saved={}, savedByDtype={}, parameters={})
    for depth in depths:
        torch.manual_seed(1234)
        c = dict(base, num_hidden_layers=depth)
        model = Bert(c) if args.model == "bert" else Llama(c, args.lora_r, args.lora_alpha, args.lora_dropout)
        model.train()
        total, by_dtype = saved_bytes(model, ids, labels)
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
        result["saved"][depth] = total
        result["savedByDtype"][depth] = by_dtype
        result["parameters"][depth] = dict(trainable=trainable, frozen=frozen)
        del model
    d0, d1 = depths[0], depths[-1]
    per_layer = (result["saved"][d1] - result["saved"][d0]) / (d1 - d0)
    result["savedPerLayer"] = per_layer
    result["savedFixed"] = result["saved"][d0] - d0 * per_layer
    result["savedPerTokenPerLayer"] = per_layer / (args.sequences * args.length)
    result["peakRssMiB"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["torch"] = torch.__version__
    print(json.dumps(result))


if __name__ == "__main__":
    main()
