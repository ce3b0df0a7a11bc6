/**
 * Issue 38: a bad setting in a notebook printed a stack trace and `{ file: undefined, line:
 * undefined }` (tslab prints a cell's error with console.error, i.e. util.inspect, and the headless
 * runner records the same text). After the notebook's setup() an InputError, UnknownNameError or
 * UnavailableError inspects as one line, `Name: message`; other errors keep their stack.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { setup } from '../lib/notebook/setup.js';
import { InputError, UnavailableError, UnknownNameError } from '../lib/util/errors.js';

test("after the notebook's setup, errors about the researcher's input print as one line; bugs keep their stack", async () => {
  const bad = new InputError("OVERRIDES: 'learningRate' applies to no recipe of any row of this table");
  assert.ok(inspect(bad).split('\n').length > 1, 'before setup: the stack');
  await setup({ ANGLE_BACKEND: 'cpu' });
  assert.equal(inspect(bad), "InputError: OVERRIDES: 'learningRate' applies to no recipe of any row of this table");
  assert.equal(inspect(new UnknownNameError('pooling', 'clss', ['cls', 'avg'])), "UnknownNameError: unknown pooling 'clss': expected one of cls, avg");
  assert.equal(inspect(new UnavailableError('no model here')), 'UnavailableError: no model here');
  assert.equal(inspect(new InputError('bad line', { file: 'a.tsv', line: 3 })), 'InputError: a.tsv:3: bad line');
  assert.ok(inspect(new TypeError('a bug')).includes('\n    at '), 'a bug keeps its stack');
});
