//! Reading the tables back: listings, the census of per-sandbox objects,
//! the sweep of what no held sandbox owns, and removal.

use super::*;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::net::Ipv4Addr;

impl Tables {
    /// Takes a sandbox out of the tables, in one transaction: everything is
    /// added first (a no-op for what is there), then deleted, so the batch
    /// never fails on something already gone. Should it fail anyway (an
    /// element of that address pointing elsewhere), each delete is tried
    /// on its own.
    pub async fn remove_member(
        &self,
        id: &str,
        addr: Option<Ipv4Addr>,
        port: Option<(&str, [u8; 6])>,
    ) {
        let chain = chain_of(id);
        let (ac, pin) = (cidr_set_of(id), pin_set_of(id));
        let mut ensure = Batch::default();
        self.add_sandbox_objects(&mut ensure, id);
        let mut elements = Vec::new();
        if let Some(a) = addr {
            ensure.push("add", "element", self.egress_element(a, Some(&chain)));
            elements.push(self.egress_element(a, None));
            let dns = self.dns_element(a);
            ensure.push("add", "element", dns.clone());
            elements.push(dns);
            if let Some((port, mac)) = port {
                let e = self.ports_element(port, &mac, a);
                ensure.push("add", "element", e.clone());
                elements.push(e);
            }
        }
        let mut steps: Vec<(&str, Value)> = elements.into_iter().map(|e| ("element", e)).collect();
        steps.push(("chain", self.inet(json!({"name": chain}))));
        steps.push(("set", self.inet(json!({"name": ac}))));
        steps.push(("set", self.inet(json!({"name": pin}))));
        let mut all = ensure;
        all.push("flush", "chain", self.inet(json!({"name": chain})));
        for (object, body) in &steps {
            all.push("delete", object, body.clone());
        }
        let Err(e) = all.run().await else { return };
        tracing::debug!(error = %e, "nft removal in one batch failed; step by step");
        delete_each(steps).await;
    }

    /// The inet table as nft prints it.
    pub async fn list(&self) -> anyhow::Result<Value> {
        self.list_family("inet").await
    }

    pub(super) async fn list_family(&self, family: &str) -> anyhow::Result<Value> {
        let out = run_nft(&["-j", "list", "table", family, &self.name], None).await?;
        Ok(serde_json::from_str(&out)?)
    }

    /// Names of the per-sandbox chains in the inet table.
    pub async fn sandbox_chains(&self) -> Vec<String> {
        let Ok(v) = self.list().await else {
            return vec![];
        };
        v["nftables"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["chain"]["name"].as_str())
            .filter_map(|n| n.strip_prefix("sb_"))
            .map(String::from)
            .collect()
    }

    /// Removes rules of sandboxes not in `ids` and addresses not in
    /// `addrs`: what a worker killed between two steps left behind.
    pub async fn sweep(&self, ids: &HashSet<String>, addrs: &HashSet<Ipv4Addr>) {
        let Ok(inet) = self.list().await else { return };
        let items: Vec<Value> = inet["nftables"].as_array().cloned().unwrap_or_default();
        let mut steps: Vec<(&str, Value)> = Vec::new();
        // An address in a listing that no held sandbox has.
        let stale = |v: &Value| {
            v.as_str()
                .and_then(|a| a.parse::<Ipv4Addr>().ok())
                .filter(|a| !addrs.contains(a))
        };
        for o in &items {
            if let Some(map) = o.get("map").filter(|m| m["name"] == "egress") {
                for e in map["elem"].as_array().into_iter().flatten() {
                    if let Some(a) = stale(&e[0]) {
                        steps.push(("element", self.egress_element(a, None)));
                    }
                }
            }
            if let Some(set) = o.get("set") {
                let name = set["name"].as_str().unwrap_or("");
                if name == "dns_ok" {
                    for e in set["elem"].as_array().into_iter().flatten() {
                        if let Some(a) = stale(e) {
                            steps.push(("element", self.dns_element(a)));
                        }
                    }
                }
            }
        }
        for o in &items {
            let owned = |kind: &str, prefix: &str| {
                o.get(kind)
                    .and_then(|c| c["name"].as_str())
                    .and_then(|n| n.strip_prefix(prefix))
                    .filter(|id| !ids.contains(*id))
                    .map(String::from)
            };
            if let Some(id) = owned("chain", "sb_") {
                steps.push(("chain", self.inet(json!({"name": chain_of(&id)}))));
            }
            for p in ["ac_", "pin_"] {
                if let Some(id) = owned("set", p) {
                    steps.push(("set", self.inet(json!({"name": format!("{p}{id}")}))));
                }
            }
        }
        if let Ok(v) = self.list_family("bridge").await {
            for o in v["nftables"].as_array().into_iter().flatten() {
                if let Some(set) = o.get("set").filter(|s| s["name"] == "ports") {
                    for e in set["elem"].as_array().into_iter().flatten() {
                        if stale(&e["concat"][2]).is_some() {
                            steps.push((
                                "element",
                                self.bridge_obj(json!({"name": "ports", "elem": [e]})),
                            ));
                        }
                    }
                }
            }
        }
        delete_each(steps).await;
    }

    /// How many per-sandbox objects the tables hold: chains and sets, and
    /// elements of the egress map, the DNS set and the ports set.
    pub async fn census(&self) -> anyhow::Result<Census> {
        let inet = self.list().await?;
        let bridge = self.list_family("bridge").await?;
        let mut c = Census::default();
        let elems = |o: &Value| o["elem"].as_array().map_or(0, Vec::len);
        for o in inet["nftables"].as_array().into_iter().flatten() {
            if let Some(n) = o["chain"]["name"].as_str() {
                c.chains += usize::from(n.starts_with("sb_"));
            }
            if let Some(n) = o["set"]["name"].as_str() {
                c.sets += usize::from(n.starts_with("ac_") || n.starts_with("pin_"));
                if n == "dns_ok" {
                    c.dns_ok = elems(&o["set"]);
                }
            }
            if o["map"]["name"] == "egress" {
                c.egress = elems(&o["map"]);
            }
        }
        for o in bridge["nftables"].as_array().into_iter().flatten() {
            if o["set"]["name"] == "ports" {
                c.ports = elems(&o["set"]);
            }
        }
        Ok(c)
    }

    /// Removes both tables (a worker leaving for good, or tests).
    pub async fn remove_all(&self) {
        for family in ["inet", "bridge"] {
            let _ = run_nft(&["delete", "table", family, &self.name], None).await;
        }
    }
}

/// Runs each delete on its own, so one that finds nothing to remove does
/// not undo the others.
pub(super) async fn delete_each(steps: Vec<(&str, Value)>) {
    for (object, body) in steps {
        let mut b = Batch::default();
        b.push("delete", object, body);
        if let Err(e) = b.run().await {
            tracing::debug!(error = %e, "nft delete found nothing");
        }
    }
}

/// Whether nft is here at all.
pub async fn available() -> bool {
    run_nft(&["--version"], None).await.is_ok()
}
