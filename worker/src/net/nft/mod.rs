//! The worker's nftables rules, written through nft's JSON API (`nft -j`):
//! one `inet` table and one `bridge` table per worker, named after its
//! bridge, and per sandbox a chain and two sets. Every change is one
//! batch, which the kernel applies atomically.
//!
//! The shape (for bridge `talon0`, pool 10.88.0.0/16, gateway .1):
//!
//! ```text
//! table inet talon0
//!   set deny4        always-denied ranges, the pool, the server, extras
//!   set dns_ok       sandboxes that may ask the worker's resolver
//!   map egress       sandbox address -> jump sb_<id>
//!   chain forward    (hook) from the bridge: jump from_sandbox;
//!                    to the bridge: established/related only
//!   chain from_sandbox  ipv6 rejected; @deny4 rejected; saddr vmap @egress;
//!                    anything else rejected
//!   chain input      (hook) from the bridge: established/related, DNS to
//!                    the gateway from @dns_ok; anything else rejected
//!   chain postrouting (nat hook) pool -> elsewhere: masquerade
//!   chain sb_<id>    open: accept | allowlist: @ac_<id>, @pin_<id> accept,
//!                    reject | sealed: reject
//! table bridge talon0
//!   set ports        port . mac . address of each sandbox
//!   chain prerouting frames from a sandbox port must carry its own MAC and
//!                    address (ARP and IPv4 only)
//!   chain forward    no frame goes from one sandbox port to another
//! ```
//!
//! Egress is evaluated on every packet a sandbox sends, not only on new
//! flows, so a policy change cuts connections that it no longer allows.

use serde_json::{Value, json};
use std::net::Ipv4Addr;
use std::time::Duration;

/// Names shared by every rule of one worker.
#[derive(Clone, Debug)]
pub struct Tables {
    /// The nft table name (inet and bridge), the bridge's name.
    pub name: String,
    pub bridge: String,
    /// nft's wildcard for the sandbox-side ports, e.g. `talon0v*`.
    pub port_glob: String,
    pub pool: ipnet::Ipv4Net,
    pub gateway: Ipv4Addr,
}

pub(super) fn payload(protocol: &str, field: &str) -> Value {
    json!({"payload": {"protocol": protocol, "field": field}})
}

pub(super) fn meta(key: &str) -> Value {
    json!({"meta": {"key": key}})
}

pub(super) fn m(left: Value, op: &str, right: Value) -> Value {
    json!({"match": {"op": op, "left": left, "right": right}})
}

pub(super) fn prefix(net: &ipnet::IpNet) -> Value {
    json!({"prefix": {"addr": net.network().to_string(), "len": net.prefix_len()}})
}

/// A reject that the sender notices at once (TCP reset, ICMP error), so
/// blocked connections fail fast instead of timing out.
pub(super) fn reject() -> Value {
    json!({"reject": null})
}

pub(super) fn accept() -> Value {
    json!({"accept": null})
}

pub(super) fn drop_() -> Value {
    json!({"drop": null})
}

/// A batch of nft commands, run as one transaction.
#[derive(Default, Debug)]
pub struct Batch(Vec<Value>);

impl Batch {
    fn push(&mut self, verb: &str, object: &str, body: Value) {
        self.0.push(json!({ verb: { object: body } }));
    }

    pub fn to_json(&self) -> String {
        json!({"nftables": self.0}).to_string()
    }

    /// Runs the batch through `nft -j -f -`.
    pub async fn run(&self) -> anyhow::Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        run_nft(&["-j", "-f", "-"], Some(self.to_json())).await?;
        Ok(())
    }
}

pub(super) async fn run_nft(args: &[&str], input: Option<String>) -> anyhow::Result<String> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new("nft")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| anyhow::anyhow!("nft (package nftables) could not be run: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    if let Some(input) = input {
        stdin.write_all(input.as_bytes()).await?;
    }
    drop(stdin);
    let out = child.wait_with_output().await?;
    if !out.status.success() {
        anyhow::bail!(
            "nft {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The per-sandbox chain and set names; ids are `sbx_[A-Za-z0-9_]+`.
pub fn chain_of(id: &str) -> String {
    format!("sb_{id}")
}
pub(super) fn cidr_set_of(id: &str) -> String {
    format!("ac_{id}")
}
pub(super) fn pin_set_of(id: &str) -> String {
    format!("pin_{id}")
}

/// Per-sandbox objects in a worker's tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Census {
    pub chains: usize,
    pub sets: usize,
    pub egress: usize,
    pub dns_ok: usize,
    pub ports: usize,
}

/// What a sandbox may reach, as rules.
#[derive(Clone, Debug)]
pub enum Verdict {
    Open,
    Allowlist { cidrs: Vec<ipnet::Ipv4Net> },
    Sealed,
}

/// One sandbox's place in the tables.
#[derive(Clone, Debug)]
pub struct Member<'a> {
    pub id: &'a str,
    pub port: &'a str,
    pub mac: [u8; 6],
    pub addr: Ipv4Addr,
}

pub fn mac_string(mac: &[u8; 6]) -> String {
    mac.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

impl Tables {
    pub(super) fn inet(&self, v: Value) -> Value {
        let mut v = v;
        v["family"] = json!("inet");
        v["table"] = json!(self.name);
        v
    }

    pub(super) fn bridge_obj(&self, v: Value) -> Value {
        let mut v = v;
        v["family"] = json!("bridge");
        v["table"] = json!(self.name);
        v
    }

    pub(super) fn rule(&self, chain: &str, expr: Vec<Value>) -> Value {
        self.inet(json!({"chain": chain, "expr": expr}))
    }

    pub(super) fn bridge_rule(&self, chain: &str, expr: Vec<Value>) -> Value {
        self.bridge_obj(json!({"chain": chain, "expr": expr}))
    }

    /// Creates or refreshes the worker's base tables. Sets and maps that
    /// exist keep their elements (sandboxes, pinned addresses), so a
    /// restarted worker changes nothing a running sandbox relies on; the
    /// base chains are flushed and written again.
    pub fn base(&self, deny: &[ipnet::IpNet]) -> Batch {
        let mut b = Batch::default();
        let t = |b: &mut Batch, family: &str| {
            b.push("add", "table", json!({"family": family, "name": self.name}))
        };
        t(&mut b, "inet");
        t(&mut b, "bridge");
        b.push(
            "add",
            "set",
            self.inet(json!({"name": "deny4", "type": "ipv4_addr", "flags": ["interval"]})),
        );
        b.push("flush", "set", self.inet(json!({"name": "deny4"})));
        let v4: Vec<Value> = deny
            .iter()
            .filter(|n| matches!(n, ipnet::IpNet::V4(_)))
            .map(prefix)
            .collect();
        if !v4.is_empty() {
            b.push(
                "add",
                "element",
                self.inet(json!({"name": "deny4", "elem": v4})),
            );
        }
        b.push(
            "add",
            "set",
            self.inet(json!({"name": "dns_ok", "type": "ipv4_addr"})),
        );
        b.push(
            "add",
            "map",
            self.inet(json!({"name": "egress", "type": "ipv4_addr", "map": "verdict"})),
        );
        for (name, hook, kind, prio) in [
            ("forward", Some("forward"), "filter", 0),
            ("input", Some("input"), "filter", 0),
            ("postrouting", Some("postrouting"), "nat", 100),
            ("from_sandbox", None, "", 0),
        ] {
            let mut c = json!({"name": name});
            if let Some(h) = hook {
                c["type"] = json!(kind);
                c["hook"] = json!(h);
                c["prio"] = json!(prio);
                c["policy"] = json!("accept");
            }
            b.push("add", "chain", self.inet(c.clone()));
            b.push("flush", "chain", self.inet(json!({"name": name})));
        }
        let from_bridge = m(meta("iifname"), "==", json!(self.bridge));
        let to_bridge = m(meta("oifname"), "==", json!(self.bridge));
        let established = m(
            json!({"ct": {"key": "state"}}),
            "in",
            json!(["established", "related"]),
        );
        for r in [
            self.rule(
                "forward",
                vec![
                    from_bridge.clone(),
                    json!({"jump": {"target": "from_sandbox"}}),
                ],
            ),
            self.rule(
                "forward",
                vec![to_bridge.clone(), established.clone(), accept()],
            ),
            self.rule("forward", vec![to_bridge, drop_()]),
            self.rule(
                "from_sandbox",
                vec![m(meta("nfproto"), "==", json!("ipv6")), reject()],
            ),
            self.rule(
                "from_sandbox",
                vec![m(payload("ip", "daddr"), "==", json!("@deny4")), reject()],
            ),
            self.rule(
                "from_sandbox",
                vec![json!({"vmap": {"key": payload("ip", "saddr"), "data": "@egress"}})],
            ),
            self.rule("from_sandbox", vec![reject()]),
            self.rule("input", vec![from_bridge.clone(), established, accept()]),
        ] {
            b.push("add", "rule", r);
        }
        for proto in ["udp", "tcp"] {
            b.push(
                "add",
                "rule",
                self.rule(
                    "input",
                    vec![
                        from_bridge.clone(),
                        m(
                            payload("ip", "daddr"),
                            "==",
                            json!(self.gateway.to_string()),
                        ),
                        m(payload(proto, "dport"), "==", json!(53)),
                        m(payload("ip", "saddr"), "==", json!("@dns_ok")),
                        accept(),
                    ],
                ),
            );
        }
        b.push(
            "add",
            "rule",
            self.rule("input", vec![from_bridge, reject()]),
        );
        b.push(
            "add",
            "rule",
            self.rule(
                "postrouting",
                vec![
                    m(
                        payload("ip", "saddr"),
                        "==",
                        prefix(&ipnet::IpNet::V4(self.pool)),
                    ),
                    m(meta("oifname"), "!=", json!(self.bridge)),
                    json!({"masquerade": null}),
                ],
            ),
        );

        // Layer 2: only a sandbox's own MAC and address leave its port,
        // and no frame crosses from one sandbox to another.
        b.push(
            "add",
            "set",
            self.bridge_obj(json!({
                "name": "ports",
                "type": ["ifname", "ether_addr", "ipv4_addr"],
            })),
        );
        for (name, hook, prio) in [
            ("prerouting", "prerouting", -200),
            ("forward", "forward", 0),
        ] {
            b.push(
                "add",
                "chain",
                self.bridge_obj(json!({
                    "name": name, "type": "filter", "hook": hook, "prio": prio, "policy": "accept",
                })),
            );
            b.push("flush", "chain", self.bridge_obj(json!({"name": name})));
        }
        let from_port = m(meta("iifname"), "==", json!(self.port_glob));
        let own =
            |l3: Vec<Value>| json!({"concat": [meta("iifname"), l3[0].clone(), l3[1].clone()]});
        for r in [
            self.bridge_rule(
                "prerouting",
                vec![
                    from_port.clone(),
                    m(payload("ether", "type"), "==", json!("ip")),
                    m(
                        own(vec![payload("ether", "saddr"), payload("ip", "saddr")]),
                        "==",
                        json!("@ports"),
                    ),
                    accept(),
                ],
            ),
            self.bridge_rule(
                "prerouting",
                vec![
                    from_port.clone(),
                    m(payload("ether", "type"), "==", json!("arp")),
                    m(
                        own(vec![
                            payload("arp", "saddr ether"),
                            payload("arp", "saddr ip"),
                        ]),
                        "==",
                        json!("@ports"),
                    ),
                    accept(),
                ],
            ),
            self.bridge_rule("prerouting", vec![from_port.clone(), drop_()]),
            self.bridge_rule("forward", vec![from_port, drop_()]),
        ] {
            b.push("add", "rule", r);
        }
        b
    }

    /// Puts a sandbox in the tables with a verdict, or changes its verdict.
    /// `clear_pins` forgets addresses pinned under an earlier policy.
    pub fn member(&self, who: &Member, verdict: &Verdict, clear_pins: bool) -> Batch {
        let mut b = Batch::default();
        let chain = chain_of(who.id);
        let (ac, pin) = (cidr_set_of(who.id), pin_set_of(who.id));
        self.add_sandbox_objects(&mut b, who.id);
        b.push("flush", "chain", self.inet(json!({"name": chain})));
        b.push("flush", "set", self.inet(json!({"name": ac})));
        if clear_pins {
            b.push("flush", "set", self.inet(json!({"name": pin})));
        }
        match verdict {
            Verdict::Open => b.push("add", "rule", self.rule(&chain, vec![accept()])),
            Verdict::Allowlist { cidrs } => {
                if !cidrs.is_empty() {
                    let elems: Vec<Value> = cidrs
                        .iter()
                        .map(|c| prefix(&ipnet::IpNet::V4(*c)))
                        .collect();
                    b.push(
                        "add",
                        "element",
                        self.inet(json!({"name": ac, "elem": elems})),
                    );
                }
                for set in [&ac, &pin] {
                    b.push(
                        "add",
                        "rule",
                        self.rule(
                            &chain,
                            vec![
                                m(payload("ip", "daddr"), "==", json!(format!("@{set}"))),
                                accept(),
                            ],
                        ),
                    );
                }
                b.push("add", "rule", self.rule(&chain, vec![reject()]));
            }
            Verdict::Sealed => b.push("add", "rule", self.rule(&chain, vec![reject()])),
        }
        b.push(
            "add",
            "element",
            self.egress_element(who.addr, Some(&chain)),
        );
        // Sealed: not even the resolver. A sandbox that was open keeps no
        // way to it (add, then delete: the batch can't fail on an element
        // that is not there).
        b.push("add", "element", self.dns_element(who.addr));
        if matches!(verdict, Verdict::Sealed) {
            b.push("delete", "element", self.dns_element(who.addr));
        }
        b.push(
            "add",
            "element",
            self.ports_element(who.port, &who.mac, who.addr),
        );
        b
    }

    /// A sandbox's chain and sets; adding them again changes nothing.
    pub(super) fn add_sandbox_objects(&self, b: &mut Batch, id: &str) {
        b.push("add", "chain", self.inet(json!({"name": chain_of(id)})));
        b.push(
            "add",
            "set",
            self.inet(json!({"name": cidr_set_of(id), "type": "ipv4_addr", "flags": ["interval"]})),
        );
        b.push(
            "add",
            "set",
            self.inet(json!({"name": pin_set_of(id), "type": "ipv4_addr", "flags": ["timeout"]})),
        );
    }

    /// The egress map's element for `addr`: with its verdict (a jump to
    /// `chain`) to add, by key alone to delete.
    pub(super) fn egress_element(&self, addr: Ipv4Addr, chain: Option<&str>) -> Value {
        let a = addr.to_string();
        let elem = match chain {
            Some(c) => json!([[a, {"jump": {"target": c}}]]),
            None => json!([a]),
        };
        self.inet(json!({"name": "egress", "elem": elem}))
    }

    pub(super) fn dns_element(&self, addr: Ipv4Addr) -> Value {
        self.inet(json!({"name": "dns_ok", "elem": [addr.to_string()]}))
    }

    pub(super) fn ports_element(&self, port: &str, mac: &[u8; 6], addr: Ipv4Addr) -> Value {
        self.bridge_obj(json!({
            "name": "ports",
            "elem": [{"concat": [port, mac_string(mac), addr.to_string()]}],
        }))
    }

    /// Pins addresses a sandbox's allowlisted names resolved to.
    pub fn pin(&self, id: &str, addrs: &[(Ipv4Addr, Duration)]) -> Batch {
        let mut b = Batch::default();
        if addrs.is_empty() {
            return b;
        }
        let elems: Vec<Value> = addrs
            .iter()
            .map(
                |(a, ttl)| json!({"elem": {"val": a.to_string(), "timeout": ttl.as_secs().max(1)}}),
            )
            .collect();
        // Adding an element that is there keeps its old timeout; add,
        // delete and add again (one transaction, so it never fails on a
        // missing element) restarts it: the newest answer's TTL wins.
        let bare: Vec<Value> = addrs.iter().map(|(a, _)| json!(a.to_string())).collect();
        let set = pin_set_of(id);
        b.push(
            "add",
            "element",
            self.inet(json!({"name": set, "elem": bare})),
        );
        b.push(
            "delete",
            "element",
            self.inet(json!({"name": set, "elem": bare})),
        );
        b.push(
            "add",
            "element",
            self.inet(json!({"name": set, "elem": elems})),
        );
        b
    }
}

mod inspect;
pub use inspect::available;

#[cfg(test)]
mod tests;
