/**
 * Terminals: a command under a PTY is a process like any other, so a
 * PtyHandle is a CommandHandle that can also be resized.
 */
import { CommandHandle } from "./commands.js";
import type { Sandbox } from "./sandbox.js";

export class PtyHandle extends CommandHandle {
  /** @internal */ sandboxRef!: Sandbox;

  async resize(size: { cols: number; rows: number }): Promise<void> {
    await this.sandboxRef.pty.resize(this.pid, size);
  }
}

export class Pty {
  constructor(private readonly s: Sandbox) {}

  private wrap(h: CommandHandle): PtyHandle {
    const p = Object.setPrototypeOf(h, PtyHandle.prototype) as PtyHandle;
    p.sandboxRef = this.s;
    return p;
  }

  /**
   * A terminal: a login shell (or `cmd`) under a PTY, as `user` (the
   * image's default when unset), killed after `timeoutMs` if given.
   */
  async create(o: {
    cols?: number;
    rows?: number;
    cmd?: string[];
    envs?: Record<string, string>;
    cwd?: string;
    tag?: string;
    user?: string;
    timeoutMs?: number;
    onData?: (data: string) => void;
  } = {}): Promise<PtyHandle> {
    const h = await this.s.commands.startPty(o.cmd ?? ["bash", "-l"], {
      envs: o.envs,
      cwd: o.cwd,
      tag: o.tag,
      user: o.user,
      timeoutMs: o.timeoutMs,
      onStdout: o.onData,
      pty: { cols: o.cols ?? 80, rows: o.rows ?? 24 },
    });
    return this.wrap(h);
  }

  /** Reattaches to a terminal by pid: its output so far, then on. */
  async connect(pid: number, o: { onData?: (data: string) => void } = {}): Promise<PtyHandle> {
    return this.wrap(await this.s.commands.connect(pid, { onStdout: o.onData }));
  }

  async resize(pid: number, size: { cols: number; rows: number }): Promise<void> {
    await this.s.conn.fetch(this.s.processPath({ pid }, ":resize"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ size }),
    });
  }

  /** Keystrokes to the terminal. */
  sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    return this.s.commands.sendStdin(pid, data);
  }

  kill(pid: number): Promise<void> {
    return this.s.commands.kill(pid);
  }
}
