//! Sandbox networking on one worker: a bridge with the gateway address, a
//! veth pair per sandbox into the network namespace its runtime made, an
//! address derived from the sandbox's slot (so there is no allocator to
//! leak: a slot is free exactly when no held sandbox has it), NAT out,
//! DNS through the worker's own resolver, and egress policies in nftables.
//!
//! Policies: `open` (anything public), `allowlist` (CIDRs, and names the
//! resolver pins), `sealed` (the interface stays, nothing leaves it) and
//! `deny` (no interface but lo: the veth is removed). Under each, the
//! always-denied ranges, the pool (other sandboxes), the server's
//! addresses and any configured extras are refused first, and the worker
//! itself (every local address, the gateway included) is unreachable but
//! for DNS.

pub mod dns;
pub mod link;
pub mod nft;

use ipnet::{IpNet, Ipv4Net};
use std::collections::{HashMap, HashSet};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::v1 as pb;

pub use talon_core::egress::ALWAYS_DENIED;

/// How a worker networks its sandboxes; see `talon worker --help`.
#[derive(Clone, Debug)]
pub struct NetOptions {
    /// The bridge, also the name of the worker's nft tables; at most 8
    /// characters, as sandbox ports are named `<bridge>v<slot>`.
    pub bridge: String,
    /// The sandbox address pool; the gateway is its first address.
    pub cidr: Ipv4Net,
    /// Where the resolver forwards; the host's first nameserver if None.
    pub dns_upstream: Option<SocketAddr>,
    /// Destinations denied besides [`ALWAYS_DENIED`] (the server's
    /// addresses are added by the worker).
    pub deny: Vec<IpNet>,
    /// The shortest time a pinned address stays allowed.
    pub pin_floor: Duration,
    /// The sandbox links' MTU; the default route's interface's if None.
    pub mtu: Option<u32>,
}

impl Default for NetOptions {
    fn default() -> Self {
        NetOptions {
            bridge: "talon0".into(),
            cidr: "10.88.0.0/16".parse().expect("valid"),
            dns_upstream: None,
            deny: vec![],
            pin_floor: Duration::from_secs(60),
            mtu: None,
        }
    }
}

/// A sandbox's egress policy: the one model (`talon_core::egress`).
pub use talon_core::egress::EgressPolicy as Egress;

/// A sandbox's network namespace: its init's, or (gVisor) one the worker
/// made before the sandbox started and keeps at a path (`ns::new_netns`).
#[derive(Clone, Debug)]
pub enum NetNs {
    Pid(u32),
    File(std::path::PathBuf),
}

impl NetNs {
    pub fn path(&self) -> std::path::PathBuf {
        match self {
            NetNs::Pid(pid) => format!("/proc/{pid}/ns/net").into(),
            NetNs::File(p) => p.clone(),
        }
    }
}

/// A policy from the server, validated: an unknown mode or a malformed
/// rule is an error (the command is refused), never `open`; and so is
/// none at all. The server resolves a create's unset policy (the
/// contract's default) and always sends the result: a spec that arrives
/// without one is a defect, and the worker fails closed on it.
pub fn egress_from_proto(p: Option<&pb::NetworkPolicy>) -> anyhow::Result<Egress> {
    let Some(p) = p else {
        anyhow::bail!("egress policy: none was sent (the server names one for every sandbox)")
    };
    Egress::try_from(talon_core::egress::PolicyParts {
        mode: p.mode,
        cidrs: p.allow_cidrs.clone(),
        domains: p.allow_domains.clone(),
    })
    .map_err(|e| anyhow::anyhow!("egress policy: {e}"))
}

/// The nft verdict; None for `deny`, which has no interface at all.
fn verdict(policy: &Egress) -> anyhow::Result<Option<nft::Verdict>> {
    Ok(match policy {
        Egress::Open => Some(nft::Verdict::Open),
        Egress::Allowlist { .. } => {
            let cidrs = policy
                .ipv4_cidrs()?
                .into_iter()
                .map(|(addr, len)| Ipv4Net::new(addr, len).map(|n| n.trunc()))
                .collect::<Result<Vec<_>, _>>()?;
            Some(nft::Verdict::Allowlist { cidrs })
        }
        Egress::Sealed => Some(nft::Verdict::Sealed),
        Egress::Deny => None,
    })
}

pub struct Network {
    opts: NetOptions,
    tables: nft::Tables,
    gateway: Ipv4Addr,
    mtu: u32,
    handle: rtnetlink::Handle,
    bridge_index: u32,
    upstream: Option<SocketAddr>,
    /// Sandbox address -> (id, policy), for the resolver.
    members: std::sync::Mutex<HashMap<Ipv4Addr, (String, Egress)>>,
    dns: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("bridge", &self.opts.bridge)
            .field("cidr", &self.opts.cidr)
            .finish()
    }
}

impl Network {
    /// Sets up (or finds) the bridge, the nft tables and the resolver.
    pub async fn start(opts: NetOptions) -> anyhow::Result<Arc<Network>> {
        anyhow::ensure!(
            !opts.bridge.is_empty()
                && opts.bridge.len() <= 8
                && opts
                    .bridge
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_'),
            "bridge name {:?}: 1 to 8 letters, digits or _",
            opts.bridge
        );
        anyhow::ensure!(
            opts.cidr.prefix_len() <= 29,
            "sandbox CIDR {} is too small (at most /29)",
            opts.cidr
        );
        anyhow::ensure!(
            nft::available().await,
            "nft (package nftables) is not installed; install it or run with --network none"
        );
        let cidr = opts.cidr.trunc();
        let gateway = Ipv4Addr::from(u32::from(cidr.network()) + 1);
        let mtu = opts.mtu.unwrap_or_else(link::uplink_mtu);
        let handle = link::connect()?;
        let bridge_index =
            link::ensure_bridge(&handle, &opts.bridge, gateway, cidr.prefix_len(), mtu).await?;
        std::fs::write("/proc/sys/net/ipv4/ip_forward", "1")
            .map_err(|e| anyhow::anyhow!("enable IPv4 forwarding: {e}"))?;
        let tables = nft::Tables {
            name: opts.bridge.clone(),
            bridge: opts.bridge.clone(),
            port_glob: format!("{}v*", opts.bridge),
            pool: cidr,
            gateway,
        };
        let mut deny: Vec<IpNet> = ALWAYS_DENIED
            .iter()
            .map(|s| s.parse().expect("valid"))
            .collect();
        deny.push(IpNet::V4(cidr));
        // The host's own networks, whatever their range (a public subnet's
        // neighbours are not the internet); read once, at start.
        let own = link::host_networks(&handle).await?;
        tracing::debug!(networks = ?own, "the host's own networks are denied to sandboxes");
        deny.extend(own.into_iter().map(IpNet::V4));
        deny.extend(opts.deny.iter().copied());
        tables.base(&IpNet::aggregate(&deny)).run().await?;
        let upstream = opts.dns_upstream.or_else(|| {
            dns::upstream_from_resolv_conf(
                &std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default(),
            )
        });
        let net = Arc::new(Network {
            opts: NetOptions { cidr, ..opts },
            tables,
            gateway,
            mtu,
            handle,
            bridge_index,
            upstream,
            members: Default::default(),
            dns: Default::default(),
        });
        let serve = dns::serve(Arc::downgrade(&net), SocketAddr::new(gateway.into(), 53)).await?;
        *net.dns.lock().expect("dns") = Some(tokio::spawn(serve));
        tracing::info!(bridge = %net.opts.bridge, pool = %cidr, gateway = %gateway, "sandbox network ready");
        Ok(net)
    }

    pub fn gateway(&self) -> Ipv4Addr {
        self.gateway
    }

    /// A slot's address: the pool's third address onward.
    pub fn addr_of(&self, slot: u32) -> anyhow::Result<Ipv4Addr> {
        let a = u32::from(self.opts.cidr.network()) + 2 + slot;
        let addr = Ipv4Addr::from(a);
        anyhow::ensure!(
            self.opts.cidr.contains(&addr) && addr != self.opts.cidr.broadcast(),
            "the sandbox pool {} is full",
            self.opts.cidr
        );
        Ok(addr)
    }

    pub fn port_of(&self, slot: u32) -> String {
        format!("{}v{slot}", self.opts.bridge)
    }

    /// A locally administered MAC per slot: the bridge learns it on that
    /// port only, and layer-2 rules refuse any other from there.
    pub fn mac_of(slot: u32) -> [u8; 6] {
        let s = slot.to_be_bytes();
        [0x02, 0x74, 0x6c, s[1], s[2], s[3]]
    }

    fn member<'a>(&self, id: &'a str, port: &'a str, slot: u32) -> anyhow::Result<nft::Member<'a>> {
        Ok(nft::Member {
            id,
            port,
            mac: Self::mac_of(slot),
            addr: self.addr_of(slot)?,
        })
    }

    /// Gives a running sandbox (its network namespace `ns`) its network under
    /// `policy`. The rules go in before the link comes up.
    pub async fn attach(
        &self,
        id: &str,
        slot: u32,
        ns: &NetNs,
        policy: &Egress,
    ) -> anyhow::Result<()> {
        let Some(verdict) = verdict(policy)? else {
            return self.detach(id, slot).await;
        };
        let port = self.port_of(slot);
        let who = self.member(id, &port, slot)?;
        let inside = link::Inside {
            addr: who.addr,
            prefix_len: self.opts.cidr.prefix_len(),
            gateway: self.gateway,
            mac: who.mac,
            mtu: self.mtu,
        };
        // The rules name the port, its MAC and address, not the link: they
        // and the link are made at once (the create waits for the slower).
        let t0 = std::time::Instant::now();
        let (rules, veth) = tokio::join!(
            async {
                let r = self.tables.member(&who, &verdict, true).run().await;
                (r, t0.elapsed())
            },
            async {
                let r =
                    link::attach_veth(&self.handle, &port, self.bridge_index, ns, &inside).await;
                (r, t0.elapsed())
            }
        );
        tracing::debug!(sandbox = %id, rules = ?rules.1, link = ?veth.1, "network attached");
        if let Err(e) = rules.0.and(veth.0) {
            let _ = self.detach(id, slot).await;
            return Err(e);
        }
        self.remember(who.addr, id, policy);
        Ok(())
    }

    /// For the resolver: who is at `addr`, under which policy.
    fn remember(&self, addr: Ipv4Addr, id: &str, policy: &Egress) {
        self.members
            .lock()
            .expect("members")
            .insert(addr, (id.to_string(), policy.clone()));
    }

    /// Takes a sandbox that is already attached back (a restarted worker):
    /// its link is kept if it is still there, its rules rewritten (pinned
    /// addresses kept). The same as an update to the policy it has.
    pub async fn adopt(
        &self,
        id: &str,
        slot: u32,
        ns: &NetNs,
        policy: &Egress,
    ) -> anyhow::Result<()> {
        self.update(id, slot, ns, policy, policy).await
    }

    /// Changes a running sandbox's policy in place. From `deny` it gets a
    /// link again; to `deny` it loses it. Addresses pinned under another
    /// policy are forgotten.
    pub async fn update(
        &self,
        id: &str,
        slot: u32,
        ns: &NetNs,
        old: &Egress,
        new: &Egress,
    ) -> anyhow::Result<()> {
        let port = self.port_of(slot);
        match verdict(new)? {
            None => self.detach(id, slot).await,
            Some(verdict) if link::index_of(&self.handle, &port).await?.is_some() => {
                let who = self.member(id, &port, slot)?;
                self.tables.member(&who, &verdict, old != new).run().await?;
                self.remember(who.addr, id, new);
                Ok(())
            }
            Some(_) => self.attach(id, slot, ns, new).await,
        }
    }

    /// Removes a sandbox's link and rules; what is already gone is fine.
    pub async fn detach(&self, id: &str, slot: u32) -> anyhow::Result<()> {
        let port = self.port_of(slot);
        let addr = self.addr_of(slot).ok();
        if let Some(a) = addr {
            self.members.lock().expect("members").remove(&a);
        }
        link::delete(&self.handle, &port).await?;
        self.tables
            .remove_member(id, addr, Some((&port, Self::mac_of(slot))))
            .await;
        Ok(())
    }

    /// Removes links and rules of sandboxes this worker no longer holds
    /// (`keep`: id -> slot of every sandbox with a network).
    pub async fn sweep(&self, keep: &HashMap<String, u32>) -> anyhow::Result<()> {
        let ports: HashSet<String> = keep.values().map(|s| self.port_of(*s)).collect();
        let prefix = format!("{}v", self.opts.bridge);
        for name in link::names_with_prefix(&self.handle, &prefix).await? {
            if !ports.contains(&name) {
                tracing::info!(link = %name, "removing a sandbox link no sandbox holds");
                link::delete(&self.handle, &name).await?;
            }
        }
        let addrs: HashSet<Ipv4Addr> = keep
            .values()
            .filter_map(|s| self.addr_of(*s).ok())
            .collect();
        self.tables
            .sweep(&keep.keys().cloned().collect(), &addrs)
            .await;
        Ok(())
    }

    /// The sandbox at `addr` and its policy, for the resolver.
    pub fn policy_of(&self, addr: Ipv4Addr) -> Option<(String, Egress)> {
        self.members.lock().expect("members").get(&addr).cloned()
    }

    pub fn dns_upstream(&self) -> Option<SocketAddr> {
        self.upstream
    }

    pub fn pin_floor(&self) -> Duration {
        self.opts.pin_floor
    }

    /// Allows a sandbox's resolved addresses for a while.
    pub async fn pin(&self, id: &str, addrs: &[(Ipv4Addr, Duration)]) -> anyhow::Result<()> {
        self.tables.pin(id, addrs).run().await
    }

    /// Stops the resolver and removes the bridge and the tables (tests, and
    /// a worker taken off a host). Sandboxes should be gone first.
    pub async fn remove(&self) {
        if let Some(t) = self.dns.lock().expect("dns").take() {
            t.abort();
        }
        self.tables.remove_all().await;
        let _ = link::delete(&self.handle, &self.opts.bridge).await;
    }

    /// The tables, for tests and diagnostics.
    pub fn tables(&self) -> &nft::Tables {
        &self.tables
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if let Some(t) = self.dns.get_mut().ok().and_then(Option::take) {
            t.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fail closed: a mode this worker doesn't know is refused, never
    /// read as open (it used to be).
    #[test]
    fn an_unknown_or_malformed_policy_is_refused() {
        assert!(
            egress_from_proto(None).is_err(),
            "an absent policy fails closed"
        );
        let p = |mode: i32, cidrs: &[&str]| pb::NetworkPolicy {
            mode,
            allow_cidrs: cidrs.iter().map(|s| s.to_string()).collect(),
            allow_domains: vec![],
        };
        assert_eq!(egress_from_proto(Some(&p(3, &[]))).unwrap(), Egress::Sealed);
        for bad in [p(7, &[]), p(-1, &[]), p(1, &["1.2.3.4"]), p(2, &["::/0"])] {
            assert!(egress_from_proto(Some(&bad)).is_err(), "{bad:?}");
        }
    }
}
