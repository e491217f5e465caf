/** A sandbox's egress policy, changed at run time. */
import type { Api } from "./client";
import type { Sandbox } from "./sandboxes";
import type { NetworkPolicy } from "../lib/network";

export async function updateNetworkPolicy(api: Api, id: string, policy: NetworkPolicy): Promise<Sandbox> {
  const r = await api.call(
    api.client.PATCH("/v1/sandboxes/{sandboxId}/network-policy", { params: { path: { sandboxId: id } }, body: policy }),
  );
  if (!r.sandbox) throw new Error("the gateway answered without the sandbox");
  return r.sandbox;
}
