import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { initBackend } from '../lib/backend/index.js';
import {
  applyChatTemplate,
  ChatTemplate,
  ChatTemplateException,
  chatPromptIds,
  chatTemplateFromTokenizerConfig,
  type ChatMessage,
} from '../lib/models/llama/chat-template.js';
import { generate } from '../lib/models/llama/generate.js';
import { writeLlamaHfDirectory } from '../lib/models/llama/hf-export.js';
import { readLlama2cCheckpoint } from '../lib/models/llama/llama2c-checkpoint.js';
import { loadLlamaModel } from '../lib/models/llama/load.js';
import { Llama2cTokenizer } from '../lib/models/tokenizers/llama2c.js';
import { InputError } from '../lib/util/errors.js';
import { Template } from '@huggingface/jinja';
import { decoderGoldenOrSkip } from './helpers/decoder.js';

/*
 * Reference renderings by Python jinja2 3.1.6 set up as transformers' apply_chat_template sets it up
 * (ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True), raise_exception, tojson as
 * json.dumps(ensure_ascii=False)), with bos_token '<s>' and eos_token '</s>'. LLAMA2 is LLaMA-2-chat's
 * tokenizer_config.json template, ZEPHYR Zephyr's (newlines between tags), MIXED exercises the rest of
 * the supported syntax and Jinja's whitespace rules.
 */
const LLAMA2 = "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";
const ZEPHYR = "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";
const MIXED = "{#- a comment -#}\n{%- set ns = namespace(found=false, n=0) -%}\n{%- for m in messages -%}\n    {%- if m.role == 'system' -%}{%- set ns.found = true -%}{%- endif -%}\n    {%- set ns.n = ns.n + 1 -%}\n{%- endfor -%}\nsystem? {{ ns.found }} count={{ ns.n }} len={{ messages | length }}\n{% for m in messages[-2:] %}\n  {% if not loop.first %}, {% endif %}{{ loop.index }}/{{ loop.length }}:{{ m['role'] | upper }}={{ m.content | trim | tojson }}\n{% endfor %}\n{{ \"x\" ~ 3 ~ none }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 'a' if 'b' not in 'abc' else 'c' }} {{ missing is defined }} {{ missing | default('dflt') }}\n{% for k, v in {'a': 1, 'b': [1, 2]}.items() %}[{{ k }}={{ v }}]{% endfor %} {{ [1, 2, 3] | join('-') }} {{ 'Hello World'.split(' ')[1].lower() }}\n  {{ 'kept indent' }}  {% if true %}inline{% endif %}\n    {%+ if true %}plus{% endif %}\n{% for x in [] %}never{% else %}empty{% endfor %}\n{{ messages[0].content.startswith('You') }} {{ (messages | last).content[:5] }} {{ 'abc'[::-1] }} {{ \"it's\" }}\n";
const MESSAGES: ChatMessage[] = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "  Hello there!  "}, {"role": "assistant", "content": "Hi. How can I help?"}, {"role": "user", "content": "Write \"one\" word."}];
const RENDERED: Record<string, string> = {
  "llama2/False": "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\n  Hello there! [/INST] Hi. How can I help? </s><s>[INST] Write \"one\" word. [/INST]",
  "llama2/True": "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\n  Hello there! [/INST] Hi. How can I help? </s><s>[INST] Write \"one\" word. [/INST]",
  "zephyr/False": "<|system|>\nYou are a helpful assistant.</s>\n<|user|>\n  Hello there!  </s>\n<|assistant|>\nHi. How can I help?</s>\n<|user|>\nWrite \"one\" word.</s>\n",
  "zephyr/True": "<|system|>\nYou are a helpful assistant.</s>\n<|user|>\n  Hello there!  </s>\n<|assistant|>\nHi. How can I help?</s>\n<|user|>\nWrite \"one\" word.</s>\n<|assistant|>\n",
  "mixed/False": "system? True count=4 len=4\n1/2:ASSISTANT=\"Hi. How can I help?\"\n, 2/2:USER=\"Write \\\"one\\\" word.\"\nx3None 3 1 c False dflt\n[a=1][b=[1, 2]] 1-2-3 world\n  kept indent  inline    plusemptyTrue Write cba it's",
  "mixed/True": "system? True count=4 len=4\n1/2:ASSISTANT=\"Hi. How can I help?\"\n, 2/2:USER=\"Write \\\"one\\\" word.\"\nx3None 3 1 c False dflt\n[a=1][b=[1, 2]] 1-2-3 world\n  kept indent  inline    plusemptyTrue Write cba it's",
  "llama2/nosystem": "<s>[INST] Hello there! [/INST] Hi. How can I help? </s><s>[INST] Write \"one\" word. [/INST]",
  "llama2/error": "Conversation roles must alternate user/assistant/user/assistant/..."
};
const TOKENS = { bos_token: '<s>', eos_token: { content: '</s>', lstrip: false } };

test('chat templates render as jinja2 with transformers\' settings: LLaMA-2-chat, Zephyr, and the rest of the supported syntax', () => {
  for (const [name, source] of [['llama2', LLAMA2], ['zephyr', ZEPHYR], ['mixed', MIXED]] as const) {
    const tpl = chatTemplateFromTokenizerConfig({ chat_template: source })!;
    for (const gen of [false, true]) {
      assert.equal(applyChatTemplate(tpl, MESSAGES, { addGenerationPrompt: gen, tokenizerConfig: TOKENS }), RENDERED[`${name}/${gen ? 'True' : 'False'}`], `${name} add_generation_prompt=${gen}`);
    }
  }
  const llama2 = new ChatTemplate(LLAMA2);
  assert.equal(applyChatTemplate(llama2, MESSAGES.slice(1), { tokenizerConfig: TOKENS }), RENDERED['llama2/nosystem']);
  assert.throws(() => applyChatTemplate(llama2, [MESSAGES[1], MESSAGES[1]], { tokenizerConfig: TOKENS }), (e: Error) => e instanceof ChatTemplateException && e.message === RENDERED['llama2/error']);
});

/*
 * Why lib/models/llama/chat-template.ts is our own interpreter and not @huggingface/jinja (issue 25):
 * the library renders the real templates above as jinja2 does, but not the rest of what transformers'
 * apply_chat_template (Python jinja2) prints, which MIXED checks: booleans print as true/false instead
 * of True/False, none prints nothing instead of None, `~` with none throws, `{%+` (keep the indentation
 * under lstrip_blocks) is a syntax error, and raise_exception cannot be given a function of ours (the
 * library declares its own, which throws a plain Error). When this test fails, the library has caught
 * up: switch to it.
 */
test('@huggingface/jinja (0.5.x) vs jinja2: the LLaMA-2 and Zephyr templates agree; printing True/None, ~ none and {%+ do not', () => {
  const vars = { messages: MESSAGES, add_generation_prompt: true, bos_token: '<s>', eos_token: '</s>' };
  assert.equal(new Template(LLAMA2).render(vars), RENDERED['llama2/True']);
  assert.equal(new Template(ZEPHYR).render(vars), RENDERED['zephyr/True']);
  const differences: string[] = [];
  const attempt = (what: string, source: string, jinja2: string) => {
    let got: string;
    try {
      got = new Template(source).render({ raise_exception: () => '' });
    } catch (e) {
      got = `error: ${(e as Error).message}`;
    }
    if (got !== jinja2) differences.push(`${what}: ${JSON.stringify(got)}, jinja2 ${JSON.stringify(jinja2)}`);
  };
  attempt('a boolean', '{{ true }}', 'True');
  attempt('none', '{{ none }}', 'None');
  attempt('~ none', "{{ 'x' ~ none }}", 'xNone');
  attempt('{%+', '  {%+ if true %}kept{% endif %}', '  kept');
  attempt('raise_exception as a variable', '{{ 1 }}', '1');
  assert.equal(differences.length, 5, differences.join('\n'));
  // Our interpreter renders each as jinja2 does.
  assert.equal(new ChatTemplate("{{ true }} {{ none }} {{ 'x' ~ none }}\n  {%+ if true %}kept{% endif %}").render({}), 'True None xNone\n  kept');
});

test('chat templates: a named template from a list, and errors naming the file and line', () => {
  const cfg = { chat_template: [{ name: 'default', template: '{{ messages | length }}' }, { name: 'tool_use', template: 'tools' }] };
  assert.equal(chatTemplateFromTokenizerConfig(cfg)!.render({ messages: [1, 2] }), '2');
  assert.equal(chatTemplateFromTokenizerConfig(cfg, 'tokenizer_config.json', 'tool_use')!.render({}), 'tools');
  assert.equal(chatTemplateFromTokenizerConfig({}), undefined);
  assert.throws(() => chatTemplateFromTokenizerConfig(cfg, 'tc.json', 'rag'), /tc\.json: no chat template named 'rag' \(it has default, tool_use\)/);
  assert.throws(() => new ChatTemplate('a\nb\n{% macro f() %}{% endmacro %}', 'tc.json'), (e: Error) => e instanceof InputError && /tc\.json:3: chat template: unsupported statement '\{% macro %\}'/.test(e.message));
  assert.throws(() => new ChatTemplate('{% if x %}unclosed'), /'if' without 'endif'/);
  assert.throws(() => new ChatTemplate('{{ x | shout }}').render({ x: 1 }), /unsupported filter 'shout'/);
  assert.throws(() => new ChatTemplate('{{ x'), /unclosed '\{\{'/);
});

test("chat prompt ids for a model directory: the template's text tokenised without a second BOS, then generation from them", async (t) => {
  const g = decoderGoldenOrSkip(t);
  if (!g) return;
  await initBackend('cpu', { quiet: true });
  const ckpt = readLlama2cCheckpoint(join(g, 'model', 'stories260K.bin'));
  const tok = Llama2cTokenizer.fromFile(join(g, 'model', 'tok512.bin'), ckpt.config.vocabSize);
  const dir = mkdtempSync(join(tmpdir(), 'chat-'));
  try {
    writeLlamaHfDirectory(dir, {
      config: ckpt.config,
      weights: ckpt.weights,
      tokenizerJson: tok.toHfTokenizerJson(),
      tokenizerConfig: { bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>', padding_side: 'left', chat_template: LLAMA2 },
    });
    const m = await loadLlamaModel(dir);
    try {
      const messages: ChatMessage[] = [{ role: 'user', content: 'Tell me a story.' }];
      const ids = chatPromptIds(m, messages);
      // "<s>[INST] Tell me a story. [/INST]": BOS written by the template, then the rest as run.c encodes it.
      assert.deepEqual(ids, [1, ...tok.encodeIds('[INST] Tell me a story. [/INST]', { bos: false })]);
      const [viaHf] = await generate(m, [ids], { maxNewTokens: 12 });
      const [viaLlama2c] = await generate({ model: m.model, tokenizer: tok }, [ids], { maxNewTokens: 12 });
      assert.deepEqual(viaHf.ids, viaLlama2c.ids);
      assert.ok(viaHf.text.length > 0);
      await assert.rejects(async () => chatPromptIds({ dir: g, tokenizer: tok }, messages), /the model has no chat template/);
    } finally {
      m.model.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
