/**
 * Enough of a Jupyter client to run one cell through a live server, the way the notebook page
 * does: the REST API opens a session for a notebook (which starts its kernel), and the kernel's
 * channels websocket (`/api/kernels/<id>/channels`) carries an `execute_request` and back its
 * `stream`/`error` outputs and the `status: idle` that ends the cell (Jupyter messaging protocol
 * 5.3, legacy JSON framing, which both Notebook 6 and jupyter_server speak when the client asks
 * for no subprotocol).
 *
 * The websocket is a minimal RFC 6455 client over node:http's upgrade (text frames, client-side
 * masking, 7/16/64-bit lengths, ping answered, close): Node 20 has no WebSocket without a flag and
 * the project has no websocket package.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { Duplex } from 'node:stream';

export interface JupyterServer {
  /** http://127.0.0.1:<port> */
  base: string;
  token: string;
}

async function api<T>(s: JupyterServer, method: string, path: string, body?: unknown): Promise<T> {
  const r = await fetch(`${s.base}${path}`, {
    method,
    headers: { Authorization: `token ${s.token}`, 'Content-Type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: HTTP ${r.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** GET /api/contents/<path>: the notebook as the server reads it. */
export function getNotebook(s: JupyterServer, path: string): Promise<{ type: string; content: { metadata: { kernelspec?: { name: string } } } }> {
  return api(s, 'GET', `/api/contents/${path.split('/').map(encodeURIComponent).join('/')}?content=1`);
}

/** POST /api/sessions: opens `path` with kernel `kernel` (started in the notebook's folder). */
export function openSession(s: JupyterServer, path: string, kernel: string): Promise<{ id: string; kernel: { id: string; name: string } }> {
  return api(s, 'POST', '/api/sessions', { path, type: 'notebook', name: path.split('/').pop(), kernel: { name: kernel } });
}

export function closeSession(s: JupyterServer, id: string): Promise<void> {
  return api(s, 'DELETE', `/api/sessions/${id}`);
}

/** A text-frame websocket connection; `messages` yields each text message. */
class TextWebSocket {
  private buffer = Buffer.alloc(0);
  private queue: string[] = [];
  private waiters: Array<(m: string | undefined) => void> = [];
  private closed = false;

  constructor(private readonly socket: Duplex) {
    socket.on('data', (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      this.parse();
    });
    socket.on('close', () => this.finish());
    socket.on('error', () => this.finish());
  }

  private finish(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  private parse(): void {
    for (;;) {
      const b = this.buffer;
      if (b.length < 2) return;
      const opcode = b[0] & 0x0f;
      let len = b[1] & 0x7f;
      let off = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        off = 10;
      }
      if (b[1] & 0x80) throw new Error('a server frame must not be masked');
      if (b.length < off + len) return;
      const payload = b.subarray(off, off + len);
      this.buffer = b.subarray(off + len);
      if (opcode === 0x1) this.push(payload.toString('utf8'));
      else if (opcode === 0x9) this.send(payload, 0xa);
      else if (opcode === 0x8) this.socket.end();
      // binary frames (messages with buffers) and continuation frames do not occur for these cells
    }
  }

  private push(m: string): void {
    const w = this.waiters.shift();
    if (w) w(m);
    else this.queue.push(m);
  }

  next(timeoutMs: number): Promise<string> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed) return Promise.reject(new Error('websocket closed'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no kernel message within ${timeoutMs / 1000} s`)), timeoutMs);
      this.waiters.push((m) => {
        clearTimeout(timer);
        if (m === undefined) reject(new Error('websocket closed'));
        else resolve(m);
      });
    });
  }

  send(data: string | Buffer, opcode = 0x1): void {
    const payload = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    const mask = randomBytes(4);
    const len = payload.length;
    const header = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    if (len >= 126 && len < 65536) {
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 126;
      header.writeUInt16BE(len, 2);
    } else if (len >= 65536) {
      header[0] = 0x80 | opcode;
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(len), 2);
    }
    const masked = Buffer.alloc(len);
    for (let i = 0; i < len; i++) masked[i] = payload[i] ^ mask[i % 4];
    this.socket.write(Buffer.concat([header, mask, masked]));
  }

  close(): void {
    if (!this.closed) this.send(Buffer.alloc(0), 0x8);
    this.socket.destroy();
  }
}

function connect(s: JupyterServer, kernelId: string, sessionId: string): Promise<TextWebSocket> {
  const url = new URL(`${s.base}/api/kernels/${kernelId}/channels?session_id=${sessionId}&token=${s.token}`);
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': randomBytes(16).toString('base64'), Authorization: `token ${s.token}` },
    });
    req.on('upgrade', (_res, socket) => resolve(new TextWebSocket(socket)));
    req.on('response', (res) => reject(new Error(`websocket upgrade refused: HTTP ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

export interface CellResult {
  /** Concatenated stdout and stderr stream text. */
  stdout: string;
  stderr: string;
  /** ename: evalue of an error output, if any. */
  error?: string;
}

/** Runs `code` in the kernel of session `sessionId` and collects its outputs until the kernel is idle again. */
export async function executeCell(s: JupyterServer, kernelId: string, sessionId: string, code: string, timeoutMs = 120_000): Promise<CellResult> {
  const ws = await connect(s, kernelId, sessionId);
  try {
    const msgId = randomUUID();
    ws.send(
      JSON.stringify({
        header: { msg_id: msgId, username: 'test', session: sessionId, msg_type: 'execute_request', version: '5.3', date: new Date().toISOString() },
        parent_header: {},
        metadata: {},
        content: { code, silent: false, store_history: true, user_expressions: {}, allow_stdin: false, stop_on_error: true },
        channel: 'shell',
        buffers: [],
      }),
    );
    const out: CellResult = { stdout: '', stderr: '' };
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = JSON.parse(await ws.next(Math.max(1, deadline - Date.now()))) as { channel: string; msg_type: string; parent_header: { msg_id?: string }; content: Record<string, unknown> };
      if (m.parent_header?.msg_id !== msgId || m.channel !== 'iopub') continue;
      if (m.msg_type === 'stream') out[m.content.name === 'stderr' ? 'stderr' : 'stdout'] += String(m.content.text);
      else if (m.msg_type === 'error') out.error = `${m.content.ename}: ${m.content.evalue}`;
      else if (m.msg_type === 'status' && m.content.execution_state === 'idle') return out;
    }
  } finally {
    ws.close();
  }
}
