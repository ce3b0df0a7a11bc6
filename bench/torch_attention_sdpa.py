"""PyTorch peer of native/dev/attention.cu: torch.nn.functional.scaled_dot_product_attention on the
same shapes, timed the same way (CUDA events around N iterations after one warm-up), forward and
forward+backward, so the device check can put the fused kernel beside PyTorch's SDPA.

Shapes (native/dev/attention.cu's CONFIGS): BERT-base 32 x 12 heads x 64, T 64, 128, 512, a padding
mask (the last quarter of every other sequence); LLaMA-7B 1 x 32 heads x 128, T 512, 2048, causal.
The masks are additive float tensors as the fused kernel gets them, which keeps SDPA on its
memory-efficient or math backend for fp32 (FlashAttention takes no mask); --dtype bf16 gives
autocast-like bf16 inputs. FLOPs: forward 4*B*H*T*S*D, backward 2.5x that (FlashAttention's count).

    python3 bench/torch_attention_sdpa.py [--json] [--iters N] [--dropout RATE] [--shape NAME] [--dtype fp32|tf32|bf16]
"""
import argparse
import json
import sys

import torch
import torch.nn.functional as F

CONFIGS = [
    ("bert-base-T64", 32, 12, 64, 64, False),
    ("bert-base-T128", 32, 12, 128, 64, False),
    ("bert-base-T512", 32, 12, 512, 64, False),
    ("llama-7b-T512", 1, 32, 512, 128, True),
    ("llama-7b-T2048", 1, 32, 2048, 128, True),
]


def mask_for(B, T, causal, device, dtype):
    m = torch.zeros(B if not causal else 1, 1, T if causal else 1, T, device=device, dtype=dtype)
    if causal:
        m[0, 0] = torch.triu(torch.full((T, T), -1e9, device=device, dtype=dtype), diagonal=1)
    else:
        m[1::2, :, :, T * 3 // 4:] = -1e9
    return m


def time_ms(f, iters):
    f()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(iters):
        f()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / iters


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="one JSON object per shape instead of a text line")
    p.add_argument("--iters", type=int, default=20, help="timed iterations (default 20)")
    p.add_argument("--dropout", type=float, default=0.0, help="dropout_p of SDPA (default 0)")
    p.add_argument("--shape", default=None, help="one shape only: " + ", ".join(c[0] for c in CONFIGS))
    p.add_argument("--dtype", default="fp32", choices=["fp32", "tf32", "bf16"], help="input precision (default fp32)")
    a = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_attention_sdpa.py: no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = a.dtype == "tf32"
    dtype = torch.bfloat16 if a.dtype == "bf16" else torch.float32
    dev = torch.device("cuda")
    ran = False
    for name, B, H, T, D, causal in CONFIGS:
        if a.shape and a.shape != name:
            continue
        ran = True
        g = torch.Generator(device=dev).manual_seed(0)
        q, k, v, dout = (torch.randn(B, H, T, D, device=dev, dtype=dtype, generator=g) for _ in range(4))
        for t in (q, k, v):
            t.requires_grad_(True)
        mask = mask_for(B, T, causal, dev, dtype)

        def fwd():
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=a.dropout)

        def both():
            out = fwd()
            torch.autograd.grad(out, (q, k, v), dout)

        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fwd_ms, both_ms = time_ms(fwd, a.iters), time_ms(both, a.iters)
        peak = torch.cuda.max_memory_allocated() - base
        flops = 4.0 * B * H * T * T * D
        row = dict(kernel="torch-sdpa", device=torch.cuda.get_device_name(), torch=torch.__version__, shape=name, B=B, H=H, T=T, D=D,
                   causal=causal, dropout=a.dropout, dtype=a.dtype, forwardMs=round(fwd_ms, 4), forwardBackwardMs=round(both_ms, 4),
                   forwardTflops=round(flops / fwd_ms / 1e9, 2), forwardBackwardTflops=round(3.5 * flops / both_ms / 1e9, 2),
                   peakExtraBytes=peak)
        if a.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"{name:16s} sdpa {a.dtype} fwd {fwd_ms:8.3f} ms ({row['forwardTflops']:6.1f} TFLOP/s) "
                  f"fwd+bwd {both_ms:8.3f} ms ({row['forwardBackwardTflops']:6.1f} TFLOP/s) peak +{peak / 2**20:.0f} MiB", flush=True)
    if not ran:
        sys.exit(f"torch_attention_sdpa.py: no shape called {a.shape}")


if __name__ == "__main__":
    main()
