/**
 * Talon Sandbox SDK for TypeScript (ESM, Node 20+, browsers with fetch).
 *
 *     import { Sandbox } from "@talon-sandbox/sdk";
 *     const sbx = await Sandbox.create();            // waits until it runs
 *     const r = await sbx.commands.run("echo hi");   // { stdout, stderr, exitCode }
 *     await sbx.kill();
 *
 * Unary calls go through openapi-fetch with the types openapi-typescript
 * generates from the OpenAPI document (src/generated/schema.ts); streams
 * (NDJSON lines) and raw file bodies use fetch directly.
 *
 * The code is split by area (errors, transport, commands, files, pty,
 * agent, browser, code, sandbox); this entry only re-exports the public
 * API, so users import everything from the package root.
 */
export {
  AlreadyExistsError,
  AuthenticationError,
  CommandExitError,
  CommandTimeoutError,
  ConflictError,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  ResourceExhaustedError,
  TalonError,
  TimeoutError,
  UnavailableError,
  UnimplementedError,
  errorFrom,
} from "./errors.js";
export type { ConnectionOptions } from "./transport.js";
export { CommandHandle, Commands, DEFAULT_COMMAND_TIMEOUT_MS } from "./commands.js";
export type { CommandResult, RunOptions } from "./commands.js";
export { Files, WatchHandle } from "./files.js";
export type { FileInfo, FileOptions, FilesystemEvent, WriteEntry } from "./files.js";
export { Pty, PtyHandle } from "./pty.js";
export { Agent } from "./agent.js";
export type { AgentEvent, AgentOptions, AgentRun } from "./agent.js";
export { Browser } from "./browser.js";
export type { BrowserInfo } from "./browser.js";
export { Code } from "./code.js";
export type { CodeContext, CodeError, CodeLanguage, CodeResult, Execution, RunCodeOptions } from "./code.js";
export { Sandbox, networkPolicy, whoami } from "./sandbox.js";
export type { ApiSandbox, CreateOptions, ListOptions, SandboxInfo, SandboxMetrics, SnapshotInfo } from "./sandbox.js";
