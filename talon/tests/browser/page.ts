// The browser side: a page that talks gRPC-web straight to talon's gRPC
// port (tonic-web), with the connect-es client and descriptors generated
// from the same protos. The test calls window.talonDemo from Playwright.
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { AuthService } from "./gen/talon/v1/auth_pb.js";
import { SandboxService } from "./gen/talon/v1/sandbox_pb.js";

declare global {
  interface Window {
    talonDemo: (baseUrl: string, apiKey: string) => Promise<Record<string, unknown>>;
  }
}

window.talonDemo = async (baseUrl, apiKey) => {
  const transport = createGrpcWebTransport({
    baseUrl,
    interceptors: [
      (next) => async (req) => {
        req.header.set("authorization", `Bearer ${apiKey}`);
        return next(req);
      },
    ],
  });
  const auth = createClient(AuthService, transport);
  const sandboxes = createClient(SandboxService, transport);
  const me = await auth.whoAmI({});
  const created = await sandboxes.createSandbox({ waitUntilRunning: true, sandbox: { image: "host" } });
  const id = created.sandbox?.sandboxId ?? "";
  const listed = await sandboxes.listSandboxes({ pageSize: 500 });
  await sandboxes.deleteSandbox({ sandboxId: id });
  let notFound = "";
  try {
    await sandboxes.getSandbox({ sandboxId: "sbx_doesnotexist" });
  } catch (e) {
    notFound = String((e as { code?: unknown }).code);
  }
  return {
    tenantId: me.tenantId,
    sandboxId: id,
    state: created.sandbox?.state,
    listed: listed.sandboxes.some((s) => s.sandboxId === id),
    notFound,
  };
};
