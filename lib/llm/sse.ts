/**
 * Server-sent events as OpenAI streams chat completions: `data: <json>\n\n` per chunk, ended by
 * `data: [DONE]\n\n` (the SSE format of the WHATWG HTML standard, §9.2: lines ending in LF, CR or
 * CRLF; `data:` lines of one event joined with LF; a blank line dispatches the event; lines
 * starting with ':' are comments; other fields such as `event:` and `id:` are not used here; an
 * event cut off by the end of the stream is not dispatched).
 */

/** The `data` payloads of the events of an SSE byte stream, in order. */
export async function* sseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const line = function* (l: string): Generator<string> {
    if (l === '') {
      if (data.length > 0) yield data.join('\n');
      data = [];
      return;
    }
    if (l.startsWith(':')) return;
    const colon = l.indexOf(':');
    const field = colon < 0 ? l : l.slice(0, colon);
    let value = colon < 0 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
  };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    // A CR at the very end may be the first half of CRLF: keep it for the next chunk.
    for (;;) {
      const m = /\r\n|\r(?=[^\n])|\n/.exec(buffer);
      if (!m) break;
      yield* line(buffer.slice(0, m.index));
      buffer = buffer.slice(m.index + m[0].length);
    }
  }
  // A stream that ends inside an event (no blank line after it) does not dispatch it (the
  // standard's rule): a connection dropped mid-event loses that event rather than half of it.
}

/** One SSE event carrying `data` (a JSON value, or the literal [DONE]). */
export function sseEvent(data: unknown): string {
  const text = typeof data === 'string' ? data : JSON.stringify(data);
  return `${text
    .split(/\r\n|\r|\n/)
    .map((l) => `data: ${l}`)
    .join('\n')}\n\n`;
}
