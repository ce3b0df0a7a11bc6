/**
 * Flickr30k captions in the f30k_precomp layout: one caption per line, the 5 captions of image i
 * on lines 5i+1..5i+5 (Karpathy split: test = 1000 images, dev = 1014).
 */
import { InputError } from '../util/errors.js';
import { locateSplit } from './locate.js';
import { checkSize } from './sizes.js';
import type { LoadOptions, SourceLine } from './sts.js';
import { pyFileLines, readText } from './text.js';

export interface CaptionSet {
  split: string;
  /** All captions in file order (caption j belongs to image floor(j / captionsPerImage)). */
  captions: string[];
  captionsPerImage: number;
  images: number;
  source: SourceLine[];
  file: string;
  /** Where the file was found (data-set loader only). */
  where?: 'local' | 'cache';
  /** Set when a size mismatch was accepted (allowSizeMismatch). */
  sizeNote?: string;
}

/** Reads a caption file with `captionsPerImage` consecutive captions per image. */
export function loadCaptionFile(file: string, split: string, captionsPerImage = 5): CaptionSet {
  const lines = pyFileLines(readText(file, `one caption per line, ${captionsPerImage} consecutive lines per image`));
  const captions: string[] = [];
  const source: SourceLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const c = lines[i].trim();
    if (c === '') throw new InputError(`empty caption: expected one caption per line`, { file, line: i + 1 });
    captions.push(c);
    source.push({ file, line: i + 1 });
  }
  if (captions.length % captionsPerImage !== 0) {
    throw new InputError(
      `${captions.length} captions is not a multiple of ${captionsPerImage}: expected ${captionsPerImage} consecutive captions per image`,
      { file, line: captions.length },
    );
  }
  return { split, captions, captionsPerImage, images: captions.length / captionsPerImage, source, file };
}

/**
 * Flickr30k captions of a split from `<dataDir>/flickr30k/<split>_caps.txt` or the Hub copy,
 * checked against the Karpathy split's 1000 test / 1014 val images.
 */
export function loadFlickr30kCaptions(split: 'test' | 'dev' = 'test', opts: LoadOptions = {}): CaptionSet {
  const loc = locateSplit('Flickr30k', split, opts);
  const set = loadCaptionFile(loc.files[0], split);
  const sizeNote = checkSize('Flickr30k', split, set.images, loc.files[0], opts);
  return { ...set, where: loc.where, ...(sizeNote ? { sizeNote } : {}) };
}
