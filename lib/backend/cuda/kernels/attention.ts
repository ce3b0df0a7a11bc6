/**
 * Fused attention (native/src/attention.cu) as the kernels AngleAttention and AngleAttentionGrad,
 * which lib/ops/fused-attention.ts dispatches to. Inputs q [B, H, T, D], k and v [B, Hkv, S, D], an
 * optional additive float32 mask [mB, 1, mT, S]; attrs scale, rate, seed. Forward returns out and
 * the per-row maximum m and normaliser l ([B, H, T]) that backward recomputes the probabilities
 * from; backward takes them with dy and returns dq, dk, dv.
 */
import { FUSED_KERNELS } from '../../fused-kernels.js';
import type { AttentionShapeArgs } from '../addon.js';
import type { CudaBackend } from '../backend.js';
import { attr, cudaOf, input, type CudaKernel, type Info, type KernelArgs } from './core.js';

/** The shape arguments of the addon call, after checking every input. */
function attentionShape(a: KernelArgs, kernel: string): { shape: AttentionShapeArgs; mask?: Info } {
  const q = input(a, 'q');
  const k = input(a, 'k');
  const v = input(a, 'v');
  const mask = a.inputs.mask;
  for (const [name, t] of [['q', q], ['k', k], ['v', v], ['mask', mask]] as const) {
    if (t && t.dtype !== 'float32') throw new Error(`cuda backend: ${kernel} ${name} must be float32, got ${t.dtype}`);
  }
  const [B, H, T, D] = q.shape;
  const [kb, Hkv, S, kd] = k.shape;
  if (q.shape.length !== 4 || k.shape.length !== 4 || kb !== B || kd !== D || v.shape.join() !== k.shape.join() || H % Hkv !== 0) {
    throw new Error(`cuda backend: ${kernel}: q ${JSON.stringify(q.shape)}, k ${JSON.stringify(k.shape)}, v ${JSON.stringify(v.shape)} are not [B, H, T, D], [B, Hkv, S, D] with H a multiple of Hkv`);
  }
  let mB = 0;
  let mT = 0;
  if (mask) {
    [mB, , mT] = mask.shape;
    if (mask.shape.length !== 4 || (mB !== 1 && mB !== B) || mask.shape[1] !== 1 || (mT !== 1 && mT !== T) || mask.shape[3] !== S) {
      throw new Error(`cuda backend: ${kernel}: mask ${JSON.stringify(mask.shape)} is not [1 or ${B}, 1, 1 or ${T}, ${S}]`);
    }
  }
  const seed = Math.abs(Math.trunc(attr<number>(a, 'seed') ?? 0)) % 2 ** 52;
  return { shape: [B, H, Hkv, T, S, D, mB, mT, attr<number>(a, 'scale'), attr<number>(a, 'rate') ?? 0, seed], mask };
}

const maskPtr = (b: CudaBackend, mask: Info | undefined) => (mask ? b.ptr(mask) : 0);

export const attentionKernels: CudaKernel[] = [
  {
    kernelName: FUSED_KERNELS.attention,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const { shape, mask } = attentionShape(a, FUSED_KERNELS.attention);
      const q = input(a, 'q');
      const rows = q.shape.slice(0, 3);
      const out = b.makeTensorInfo(q.shape, 'float32');
      const m = b.makeTensorInfo(rows, 'float32');
      const l = b.makeTensorInfo(rows, 'float32');
      b.addon.attentionForward(b.ptr(q), b.ptr(input(a, 'k')), b.ptr(input(a, 'v')), maskPtr(b, mask), b.ptr(out), b.ptr(m), b.ptr(l), ...shape);
      return [out, m, l];
    },
  },
  {
    kernelName: FUSED_KERNELS.attentionGrad,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const { shape, mask } = attentionShape(a, FUSED_KERNELS.attentionGrad);
      const q = input(a, 'q');
      const k = input(a, 'k');
      const rowDot = b.makeTensorInfo(q.shape.slice(0, 3), 'float32');
      const dq = b.makeTensorInfo(q.shape, 'float32');
      const dk = b.makeTensorInfo(k.shape, 'float32');
      const dv = b.makeTensorInfo(k.shape, 'float32');
      b.addon.attentionBackward(
        b.ptr(q), b.ptr(k), b.ptr(input(a, 'v')), maskPtr(b, mask), b.ptr(input(a, 'out')), b.ptr(input(a, 'dy')),
        b.ptr(input(a, 'm')), b.ptr(input(a, 'l')), b.ptr(rowDot), b.ptr(dq), b.ptr(dk), b.ptr(dv), ...shape,
      );
      b.disposeIntermediateTensorInfo(rowDot);
      return [dq, dk, dv];
    },
  },
];
