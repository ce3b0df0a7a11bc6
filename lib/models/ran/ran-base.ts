/**
 * RAN_base, the backbone of AnglE's "AnglE-RAN" row (AnglE §4, Table 3: "RAN_base (86M
 * parameters) (Li et al., 2023)"): where its released checkpoint is, where to put it, and the
 * configuration assumed when it is not here.
 *
 * The checkpoint is not on the Hugging Face Hub. The RAN README (github 4AI/RAN, "Pretrained
 * Models", "V3 Models", compatible with rannet > 0.2.1) links one English base zip, on Google Drive
 * (https://drive.google.com/file/d/1CO1M_57U506_3mDBqtGo-5b1XXNpONln/view) and on Baidu NetDisk
 * (https://pan.baidu.com/s/1Z2wODILsIeZ3i8_9GEpl2g, code udts); an older README linked a V2 zip
 * (for rannet <= 0.2.1, which chains layers differently and is not what ./model.ts computes). The
 * zip holds `config.json`, `vocab.txt` and the TensorFlow checkpoint `model.ckpt.index` +
 * `model.ckpt.data-*`: unzip it into a folder and point ANGLE_RAN_MODEL at it (or unzip it to
 * `<shared>/models/RAN_base`); loadModel reads the folder as it is (./load.ts).
 *
 * Its config.json could not be read here (the zip was not reachable), so its shapes are ASSUMED
 * wherever the folder is absent (the rehearsal, the cost table): D 768 with 12 heads x 64 (the
 * attention width equal to D, as in BERT-base), 7 RAN layers, bert-base-uncased's 30522-token
 * vocabulary, RanNetParams' default windows (256, min 16): 85.5M parameters by ./weights.ts's shapes,
 * the paper's "86M". Only the parameter count is the paper's; every other value is a choice.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const RAN_BASE_ID = 'RAN_base';

/** The assumed RAN_base config.json (see the file comment: only the ~86M parameters are the paper's). */
export const RAN_BASE_ASSUMED_CONFIG: Readonly<Record<string, unknown>> = {
  model_type: 'rannet',
  vocab_size: 30522,
  embedding_size: 768,
  ran_layers: 7,
  head_num: 12,
  head_size: 64,
  window_size: 256,
  min_window_size: 16,
  cell_pooling: 'mean',
  dropout_rate: 0.1,
};

export const RAN_BASE_CARD = {
  id: RAN_BASE_ID,
  title: 'RAN_base (Recurrent Attention Network, English V3 base), the backbone of AnglE-RAN',
  source: 'Li et al. (2023), Recurrent Attention Networks for Long-text Modeling, Findings of ACL 2023 (arXiv 2306.06843); code github 4AI/RAN, PyPI rannet',
  licence: 'MIT (the rannet code; the README states no separate licence for the weights)',
  download:
    'not on the Hugging Face Hub: the RAN README\'s "V3 Models" table links the English base zip on Google Drive (https://drive.google.com/file/d/1CO1M_57U506_3mDBqtGo-5b1XXNpONln/view) and Baidu NetDisk (https://pan.baidu.com/s/1Z2wODILsIeZ3i8_9GEpl2g, code udts)',
  install: 'unzip it (config.json, vocab.txt, model.ckpt.index, model.ckpt.data-*) into a folder and set ANGLE_RAN_MODEL=<that folder>, or unzip it to <shared>/models/RAN_base',
  usedIn: 'AnglE Table 3 (AnglE-RAN row; notebook 02)',
} as const;

/**
 * The RAN_base folder of this machine: ANGLE_RAN_MODEL, else <shared>/models/RAN_base when it has
 * a config.json; undefined when neither is here.
 */
export function ranBaseDir(env: NodeJS.ProcessEnv = process.env, sharedDir?: string): string | undefined {
  if (env.ANGLE_RAN_MODEL) return env.ANGLE_RAN_MODEL;
  const dir = sharedDir ? join(sharedDir, 'models', RAN_BASE_ID) : undefined;
  return dir && existsSync(join(dir, 'config.json')) ? dir : undefined;
}
