"""PyTorch eager peer of bench/cuda-train-step.ts: the same BERT-base training step, same device run.

BERT-base random init (transformers BertModel(BertConfig()) when transformers is installed, else a
self-contained BERT with the same layers), model.train() (dropout 0.1), [CLS] pooling, the AnglE
cosine (CoSENT) objective with tau 20 on a zigzag batch of random token ids and random 0..5 labels,
torch.optim.AdamW(lr 2e-5, weight_decay 0.01). fp32, TF32 (torch.backends.cuda.matmul.allow_tf32) and bf16
(torch.autocast('cuda', dtype=torch.bfloat16) around the forward and the loss, TF32 allowed for what stays
float32; fp32 master weights and AdamW state, as in mixed-precision training).
tokens/s = pairs * 2 * tokens * steps / seconds, timed between torch.cuda.synchronize() calls.

    python3 bench/torch_train_step.py --configs 32x64,128x64,256x32 --steps 20 --out torch.json
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
              max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12, hidden_dropout_prob=0.1,
              attention_probs_dropout_prob=0.1)


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.heads = c["num_attention_heads"]
        self.qkv = nn.Linear(h, 3 * h)
        self.out = nn.Linear(h, h)
        self.ln1 = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.ff1 = nn.Linear(h, c["intermediate_size"])
        self.ff2 = nn.Linear(c["intermediate_size"], h)
        self.ln2 = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.p = c["hidden_dropout_prob"]
        self.pa = c["attention_probs_dropout_prob"]
        self.sdpa = c.get("sdpa", False)

    def forward(self, x, mask):
        b, t, h = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        if self.sdpa:
            a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=self.pa if self.training else 0.0)
        else:
            s = q @ k.transpose(-1, -2) / math.sqrt(h // self.heads) + mask
            a = F.dropout(s.softmax(-1), self.pa, self.training) @ v
        a = a.transpose(1, 2).reshape(b, t, h)
        x = self.ln1(x + F.dropout(self.out(a), self.p, self.training))
        return self.ln2(x + F.dropout(self.ff2(F.gelu(self.ff1(x))), self.p, self.training))


class SelfContainedBert(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden_size"]
        self.word = nn.Embedding(c["vocab_size"], h)
        self.pos = nn.Embedding(c["max_position_embeddings"], h)
        self.type = nn.Embedding(c["type_vocab_size"], h)
        self.ln = nn.LayerNorm(h, eps=c["layer_norm_eps"])
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.p = c["hidden_dropout_prob"]
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, 0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, input_ids, attention_mask, token_type_ids):
        t = input_ids.shape[1]
        x = self.word(input_ids) + self.pos(torch.arange(t, device=input_ids.device)) + self.type(token_type_ids)
        x = F.dropout(self.ln(x), self.p, self.training)
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -1e9
        for layer in self.layers:
            x = layer(x, mask)
        return x


def make_model(attention=None):
    try:
        import transformers
        from transformers import BertConfig, BertModel

        kwargs = {"attn_implementation": attention} if attention else {}
        m = BertModel(BertConfig(**CONFIG, **kwargs), add_pooling_layer=True)
        attn = getattr(m.config, "_attn_implementation", None) or "default"
        return m, f"transformers {transformers.__version__} BertModel", attn, lambda out: out.last_hidden_state
    except ImportError:
        sdpa = attention == "sdpa"
        return SelfContainedBert(dict(CONFIG, sdpa=sdpa)), "self-contained torch BERT (transformers not installed)", "F.scaled_dot_product_attention" if sdpa else "matmul+softmax", lambda out: out


def cosine_loss(emb, labels, tau=20.0):
    a, b = emb[0::2], emb[1::2]
    s = F.cosine_similarity(a, b, dim=-1) * tau
    diff = s[:, None] - s[None, :]
    ordered = (labels[:, None] < labels[None, :]).float()
    diff = diff - (1 - ordered) * 1e12
    return torch.logsumexp(torch.cat([torch.zeros(1, device=emb.device), diff.reshape(-1)]), 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", default="32x64,128x64,256x32")
    ap.add_argument("--precisions", default="fp32,tf32", help="comma-separated: fp32, tf32, bf16 (autocast)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--attention", choices=["eager", "sdpa"], help="transformers' attention implementation (default: its own choice)")
    ap.add_argument("--out")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch_train_step.py: torch.cuda.is_available() is False", file=sys.stderr)
        sys.exit(2)
    dev = torch.device("cuda")
    torch.manual_seed(1234)
    model, model_name, attn, hidden = make_model(args.attention)
    model.to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.01)
    print(f"torch {torch.__version__}, {model_name}, attention {attn}, {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters, {torch.cuda.get_device_name()}")
    rows = []
    for cfg in args.configs.split(","):
        pairs, tokens = (int(v) for v in cfg.split("x"))
        g = torch.Generator(device="cpu").manual_seed(99)
        ids = torch.randint(1000, CONFIG["vocab_size"], (2 * pairs, tokens), generator=g).to(dev)
        mask = torch.ones_like(ids)
        types = torch.zeros_like(ids)
        labels = torch.randint(0, 6, (pairs,), generator=g).float().to(dev)
        for precision in args.precisions.split(","):
            if precision not in ("fp32", "tf32", "bf16"):
                print(f"torch_train_step.py: unknown precision {precision!r} (fp32, tf32, bf16)", file=sys.stderr)
                sys.exit(2)
            torch.backends.cuda.matmul.allow_tf32 = precision != "fp32"
            torch.backends.cudnn.allow_tf32 = precision != "fp32"

            def step():
                opt.zero_grad(set_to_none=True)
                with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
                    out = model(input_ids=ids, attention_mask=mask, token_type_ids=types)
                    loss = cosine_loss(hidden(out)[:, 0].float(), labels)
                loss.backward()
                opt.step()
                return loss

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            for _ in range(args.warmup):
                step()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.steps):
                loss = step()
            final = loss.item()
            torch.cuda.synchronize()
            sec = time.perf_counter() - t0
            tps = pairs * 2 * tokens * args.steps / sec
            # Whole-step peak over this configuration's steps (weights, AdamW state, activations, gradients).
            peak = torch.cuda.max_memory_allocated()
            rows.append(dict(config=cfg, precision=precision, tokensPerSecond=tps, msPerStep=sec / args.steps * 1000, finalLoss=final, maxMemoryAllocated=peak))
            print(f"config {cfg} {precision}: {tps:.0f} tokens/s ({sec / args.steps * 1000:.1f} ms/step, loss {final:.4f}, max_memory_allocated {peak / 2**30:.2f} GiB)")
    result = dict(model=model_name, attention=attn, versions=dict(torch=torch.__version__, torchCuda=torch.version.cuda), rows=rows)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
