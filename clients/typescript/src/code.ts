/**
 * Code interpreting: kernels that keep their state between runs, with
 * rich results (E2B's code-interpreter model).
 */
import { InvalidArgumentError, TalonError, errorFrom } from "./errors.js";
import type { Sandbox } from "./sandbox.js";
import { enc, ndjson, seconds } from "./transport.js";

/** A code context: a kernel in the sandbox that keeps its state between runs. */
export interface CodeContext {
  id: string;
  language: string;
  cwd: string;
  executionCount: number;
}

/** A rich result by MIME type; binary types (PNG, …) are base64 text. */
export interface CodeResult {
  data: Record<string, string>;
  isMainResult: boolean;
}

/** What the code raised: name ("ZeroDivisionError"), value and traceback. */
export interface CodeError {
  name: string;
  value: string;
  traceback: string[];
}

/** A run: its output, results, error (undefined when it succeeded) and end. */
export interface Execution {
  stdout: string;
  stderr: string;
  results: CodeResult[];
  error?: CodeError;
  /** The main result's text/plain. */
  text?: string;
  executionCount: number;
  durationMs: number;
  interrupted: boolean;
  timedOut: boolean;
}

export type CodeLanguage = "python" | "javascript" | "bash";

export interface RunCodeOptions {
  /** The context (or its id); the language's default context when unset. */
  context?: CodeContext | string;
  /** The default context's language ("python" when unset). */
  language?: CodeLanguage;
  timeoutMs?: number;
  onStdout?: (text: string) => unknown;
  onStderr?: (text: string) => unknown;
  onResult?: (r: CodeResult) => unknown;
  onError?: (e: CodeError) => unknown;
}

const codeLanguage = (l: string): string => {
  const m: Record<string, string> = {
    python: "CODE_LANGUAGE_PYTHON",
    javascript: "CODE_LANGUAGE_JAVASCRIPT",
    js: "CODE_LANGUAGE_JAVASCRIPT",
    bash: "CODE_LANGUAGE_BASH",
  };
  const v = m[l.toLowerCase()];
  if (!v) throw new InvalidArgumentError(`unknown language ${JSON.stringify(l)}: python, javascript or bash`);
  return v;
};

function codeContext(body: unknown): CodeContext {
  const b = (body ?? {}) as Record<string, any>;
  const c = (b.context ?? b) as Record<string, any>;
  return {
    id: String(c.contextId ?? ""),
    language: String(c.language ?? "").replace(/^CODE_LANGUAGE_/, "").toLowerCase(),
    cwd: String(c.cwd ?? ""),
    executionCount: Number(c.executionCount ?? 0),
  };
}

const ctxId = (c: CodeContext | string): string => (typeof c === "string" ? c : c.id);

/** Code contexts: Python (ipykernel), JavaScript (Node) and Bash kernels. */
export class Code {
  constructor(private readonly s: Sandbox) {}

  private async call(method: string, rest: string, body?: unknown): Promise<unknown> {
    const init: RequestInit = { method };
    if (body !== undefined) {
      init.headers = { "content-type": "application/json" };
      init.body = JSON.stringify(body);
    }
    const resp = await this.s.conn.fetch(`${this.s.path}${rest}`, init);
    const text = await resp.text();
    return text ? JSON.parse(text) : {};
  }

  /** Runs code; an error the code raises is `Execution.error`, not a throw. */
  async run(code: string, o: RunCodeOptions = {}): Promise<Execution> {
    const body: Record<string, unknown> = { code };
    if (o.context !== undefined) body.contextId = ctxId(o.context);
    if (o.language) body.language = codeLanguage(o.language);
    if (o.timeoutMs) body.timeout = seconds(o.timeoutMs);
    const resp = await this.s.conn.fetch(`${this.s.path}/code:run`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const x: Execution = {
      stdout: "",
      stderr: "",
      results: [],
      executionCount: 0,
      durationMs: 0,
      interrupted: false,
      timedOut: false,
    };
    let done = false;
    for await (const line of ndjson(resp)) {
      if (line.error) throw errorFrom(0, line.error);
      const e = line as Record<string, any>;
      if (e.stdout) {
        x.stdout += String(e.stdout.text ?? "");
        await o.onStdout?.(String(e.stdout.text ?? ""));
      } else if (e.stderr) {
        x.stderr += String(e.stderr.text ?? "");
        await o.onStderr?.(String(e.stderr.text ?? ""));
      } else if (e.result) {
        const r: CodeResult = { data: { ...(e.result.data ?? {}) }, isMainResult: Boolean(e.result.isMainResult) };
        x.results.push(r);
        if (r.isMainResult) x.text = r.data["text/plain"];
        await o.onResult?.(r);
      } else if (e.codeError) {
        const c = e.codeError;
        x.error = { name: String(c.name ?? ""), value: String(c.value ?? ""), traceback: [...(c.traceback ?? [])] };
        await o.onError?.(x.error);
      } else if (e.completed) {
        const c = e.completed;
        x.executionCount = Number(c.executionCount ?? 0);
        x.durationMs = parseFloat(String(c.duration ?? "0s")) * 1000;
        x.interrupted = Boolean(c.interrupted);
        x.timedOut = Boolean(c.timedOut);
        done = true;
      }
    }
    if (!done) throw new TalonError("the run ended without completing");
    return x;
  }

  /** Starts a context; its kernel answers before this resolves. */
  async createContext(o: { language?: CodeLanguage; cwd?: string; envs?: Record<string, string> } = {}): Promise<CodeContext> {
    const body: Record<string, unknown> = { language: codeLanguage(o.language ?? "python") };
    if (o.cwd) body.cwd = o.cwd;
    if (o.envs) body.env = o.envs;
    return codeContext(await this.call("POST", "/code-contexts", body));
  }

  async listContexts(): Promise<CodeContext[]> {
    const b = (await this.call("GET", "/code-contexts")) as { contexts?: unknown[] };
    return (b.contexts ?? []).map(codeContext);
  }

  /** A fresh kernel: the state is gone, the id stays. */
  async restartContext(c: CodeContext | string): Promise<CodeContext> {
    return codeContext(await this.call("POST", `/code-contexts/${enc(ctxId(c))}:restart`, {}));
  }

  /** Interrupts the context's run (KeyboardInterrupt in Python). */
  async interrupt(c: CodeContext | string): Promise<void> {
    await this.call("POST", `/code-contexts/${enc(ctxId(c))}:interrupt`, {});
  }

  async deleteContext(c: CodeContext | string): Promise<void> {
    await this.call("DELETE", `/code-contexts/${enc(ctxId(c))}`);
  }
}
