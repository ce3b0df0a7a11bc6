/**
 * Hub answers that need the user to do something on the Hub itself, as distinct error classes so a
 * caller (a notebook cell, a command) can tell them apart from a network failure.
 */
import { UnavailableError } from '../util/errors.js';

/**
 * A gated repository (e.g. meta-llama/Llama-2-7b-hf): the Hub answers 401 `GatedRepo` without a
 * token and 403 `GatedRepo` when the token's account has not been granted access. The message is
 * one line: the exact id, where to accept the licence, and HF_TOKEN.
 */
export class GatedRepoError extends UnavailableError {
  constructor(
    readonly repo: string,
    readonly repoType: 'model' | 'dataset',
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'GatedRepoError';
  }
}
