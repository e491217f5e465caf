/**
 * Code contexts (CodeService): the kernels of a sandbox, and running a
 * cell in one with its events streamed as they come.
 */
import { type Api, type Schemas, seg } from "./client";
import { messages } from "./ndjson";

export type CodeContext = Schemas["CodeContext"];
export type CodeLanguage = NonNullable<CodeContext["language"]>;
export type CodeEvent = Schemas["RunCodeResponse"];

export const LANGUAGES: { value: CodeLanguage; label: string }[] = [
  { value: "CODE_LANGUAGE_PYTHON", label: "Python" },
  { value: "CODE_LANGUAGE_JAVASCRIPT", label: "JavaScript" },
  { value: "CODE_LANGUAGE_BASH", label: "Bash" },
];

export function languageLabel(l: CodeLanguage | undefined): string {
  return LANGUAGES.find((x) => x.value === l)?.label ?? "Unknown";
}

const ctxPath = (id: string) => ({ sandboxId: id });

export async function listContexts(api: Api, id: string): Promise<CodeContext[]> {
  const r = await api.call(
    api.client.GET("/v1/sandboxes/{sandboxId}/code-contexts", { params: { path: ctxPath(id) } }),
  );
  return r.contexts ?? [];
}

export async function createContext(api: Api, id: string, language: CodeLanguage): Promise<CodeContext> {
  const r = await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/code-contexts", {
      params: { path: ctxPath(id) },
      body: { language },
    }),
  );
  if (!r.context) throw new Error("the gateway answered without the context");
  return r.context;
}

export async function deleteContext(api: Api, id: string, contextId: string): Promise<void> {
  await api.call(
    api.client.DELETE("/v1/sandboxes/{sandboxId}/code-contexts/{contextId}", {
      params: { path: { sandboxId: id, contextId } },
    }),
  );
}

export async function restartContext(api: Api, id: string, contextId: string): Promise<void> {
  await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/code-contexts/{contextId}:restart", {
      params: { path: { sandboxId: id, contextId } },
      body: {},
    }),
  );
}

export async function interruptContext(api: Api, id: string, contextId: string): Promise<void> {
  await api.call(
    api.client.POST("/v1/sandboxes/{sandboxId}/code-contexts/{contextId}:interrupt", {
      params: { path: { sandboxId: id, contextId } },
      body: {},
    }),
  );
}

/** Runs `code` in a context; each event as it arrives. */
export async function runCode(
  api: Api,
  id: string,
  contextId: string,
  code: string,
  onEvent: (e: CodeEvent) => void,
  signal?: AbortSignal,
): Promise<void> {
  const resp = await api.postStream(`/v1/sandboxes/${seg(id)}/code:run`, { contextId, code }, signal);
  for await (const m of messages(resp)) onEvent(m as CodeEvent);
}
