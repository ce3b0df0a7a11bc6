/**
 * The fused custom kernels lib/ops dispatches to (names in ../../fused-kernels.ts: LayerNorm, GELU, AdamW) and device dropout.
 * Their names are this project's own; tfjs-core never dispatches them by itself.
 */
import { FUSED_KERNELS } from '../../fused-kernels.js';
import { sizeOf } from '../shapes.js';
import { attr, castTo, cudaOf, input, type CudaKernel, type Info } from './core.js';
import type { CudaBackend } from '../backend.js';

function float(b: CudaBackend, t: Info, what: string): Info {
  if (t.dtype !== 'float32') throw new Error(`cuda backend: ${what} must be float32, got ${t.dtype}`);
  return t;
}

export const fusedKernels: CudaKernel[] = [
  {
    kernelName: FUSED_KERNELS.layerNorm,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = float(b, input(a, 'x'), 'LayerNorm x');
      const cols = x.shape[x.shape.length - 1];
      const rows = sizeOf(x.shape) / cols;
      const y = b.makeTensorInfo(x.shape, 'float32');
      const mean = b.makeTensorInfo([rows], 'float32');
      const rstd = b.makeTensorInfo([rows], 'float32');
      b.addon.layerNorm(b.ptr(x), b.ptr(input(a, 'gamma')), b.ptr(input(a, 'beta')), b.ptr(y), b.ptr(mean), b.ptr(rstd), rows, cols, attr<number>(a, 'epsilon'));
      return [y, mean, rstd];
    },
  },
  {
    kernelName: FUSED_KERNELS.layerNormGrad,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const gamma = input(a, 'gamma');
      const cols = x.shape[x.shape.length - 1];
      const rows = sizeOf(x.shape) / cols;
      const dx = b.makeTensorInfo(x.shape, 'float32');
      const dgamma = b.makeTensorInfo(gamma.shape, 'float32');
      const dbeta = b.makeTensorInfo(gamma.shape, 'float32');
      b.addon.layerNormGrad(b.ptr(input(a, 'dy')), b.ptr(x), b.ptr(gamma), b.ptr(input(a, 'mean')), b.ptr(input(a, 'rstd')), b.ptr(dx), b.ptr(dgamma), b.ptr(dbeta), rows, cols);
      return [dx, dgamma, dbeta];
    },
  },
  {
    kernelName: FUSED_KERNELS.gelu,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = float(b, input(a, 'x'), 'GELU x');
      const y = b.makeTensorInfo(x.shape, 'float32');
      b.addon.gelu(b.ptr(x), b.ptr(y), sizeOf(x.shape));
      return y;
    },
  },
  {
    kernelName: FUSED_KERNELS.geluGrad,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const dx = b.makeTensorInfo(x.shape, 'float32');
      b.addon.geluGrad(b.ptr(input(a, 'dy')), b.ptr(x), b.ptr(dx), sizeOf(x.shape));
      return dx;
    },
  },
  {
    kernelName: FUSED_KERNELS.adamW,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const p = input(a, 'param');
      const n = sizeOf(p.shape);
      const pOut = b.makeTensorInfo(p.shape, 'float32');
      const mOut = b.makeTensorInfo(p.shape, 'float32');
      const vOut = b.makeTensorInfo(p.shape, 'float32');
      b.addon.adamW(
        b.ptr(p), b.ptr(input(a, 'grad')), b.ptr(input(a, 'm')), b.ptr(input(a, 'v')),
        b.ptr(pOut), b.ptr(mOut), b.ptr(vOut), n,
        attr<number>(a, 'lr'), attr<number>(a, 'beta1'), attr<number>(a, 'beta2'), attr<number>(a, 'eps'),
        attr<number>(a, 'weightDecay'), attr<number>(a, 'biasCorrection1'), attr<number>(a, 'biasCorrection2'),
      );
      return [pOut, mOut, vOut];
    },
  },
  {
    // In place: each parameter and its moments are written where they are (a captured graph keeps
    // reading the same addresses); inputs p0.., g0.., m0.., v0.. and hyper [count, 4]; no outputs.
    kernelName: FUSED_KERNELS.adamWMulti,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const count = attr<number>(a, 'count');
      const ptrs = (prefix: string) => Array.from({ length: count }, (_, i) => b.ptr(float(b, input(a, `${prefix}${i}`), `AdamW ${prefix}${i}`)));
      const sizes = Array.from({ length: count }, (_, i) => sizeOf(input(a, `p${i}`).shape));
      b.addon.adamWMulti(ptrs('p'), ptrs('g'), ptrs('m'), ptrs('v'), sizes, b.ptr(float(b, input(a, 'hyper'), 'AdamW hyper-parameters')), attr<number>(a, 'beta1'), attr<number>(a, 'beta2'), attr<number>(a, 'eps'));
      return [];
    },
  },
  {
    kernelName: FUSED_KERNELS.addLayerNorm,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = float(b, input(a, 'a'), 'add-LayerNorm a');
      const r = float(b, input(a, 'b'), 'add-LayerNorm b');
      if (sizeOf(x.shape) !== sizeOf(r.shape)) throw new Error(`cuda backend: add-LayerNorm: a [${x.shape}] and b [${r.shape}] differ in size`);
      const cols = x.shape[x.shape.length - 1];
      const rows = sizeOf(x.shape) / cols;
      const y = b.makeTensorInfo(x.shape, 'float32');
      const mean = b.makeTensorInfo([rows], 'float32');
      const rstd = b.makeTensorInfo([rows], 'float32');
      const u = b.makeTensorInfo(x.shape, 'float32');
      b.addon.addLayerNorm(b.ptr(x), b.ptr(r), b.ptr(u), b.ptr(input(a, 'gamma')), b.ptr(input(a, 'beta')), b.ptr(y), b.ptr(mean), b.ptr(rstd), rows, cols, attr<number>(a, 'epsilon'), attr<number>(a, 'rate') ?? 0, attr<number>(a, 'seed') ?? 0);
      return [y, mean, rstd, u];
    },
  },
  {
    kernelName: FUSED_KERNELS.biasGelu,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = float(b, input(a, 'x'), 'bias-GELU x');
      const bias = float(b, input(a, 'bias'), 'bias-GELU bias');
      const cols = x.shape[x.shape.length - 1];
      if (bias.shape.length !== 1 || bias.shape[0] !== cols) throw new Error(`cuda backend: bias-GELU: bias [${bias.shape}] does not match the last dimension of x [${x.shape}]`);
      const y = b.makeTensorInfo(x.shape, 'float32');
      b.addon.biasGelu(b.ptr(x), b.ptr(bias), b.ptr(y), sizeOf(x.shape) / cols, cols);
      return y;
    },
  },
  {
    kernelName: FUSED_KERNELS.biasGeluGrad,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = input(a, 'x');
      const cols = x.shape[x.shape.length - 1];
      const du = b.makeTensorInfo(x.shape, 'float32');
      b.addon.biasGeluGrad(b.ptr(float(b, input(a, 'dy'), 'bias-GELU dy')), b.ptr(x), b.ptr(input(a, 'bias')), b.ptr(du), sizeOf(x.shape) / cols, cols);
      return du;
    },
  },
  {
    kernelName: FUSED_KERNELS.dropoutAdd,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x = float(b, input(a, 'x'), 'dropout-add x');
      const r = float(b, input(a, 'residual'), 'dropout-add residual');
      if (sizeOf(x.shape) !== sizeOf(r.shape)) throw new Error(`cuda backend: dropout-add: x [${x.shape}] and residual [${r.shape}] differ in size`);
      const y = b.makeTensorInfo(x.shape, 'float32');
      b.addon.dropoutAdd(b.ptr(x), b.ptr(r), b.ptr(y), sizeOf(x.shape), attr<number>(a, 'rate'), attr<number>(a, 'seed'));
      return y;
    },
  },
  {
    kernelName: FUSED_KERNELS.dropout,
    kernelFunc: (a) => {
      const b = cudaOf(a);
      const x0 = input(a, 'x');
      const x = x0.dtype === 'float32' ? x0 : castTo(b, x0, 'float32');
      const y = b.makeTensorInfo(x.shape, 'float32');
      b.addon.dropout(b.ptr(x), b.ptr(y), sizeOf(x.shape), attr<number>(a, 'rate'), attr<number>(a, 'seed'));
      if (x !== x0) b.disposeIntermediateTensorInfo(x);
      return y;
    },
  },
];
