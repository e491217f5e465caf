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
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use talon_proto::v1 as pb;

/// Ranges denied before any policy, whatever the policy: private, shared,
/// loopback, link-local (cloud metadata), and unique-local IPv6.
pub const ALWAYS_DENIED: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "224.0.0.0/3",
    "fc00::/7",
    "fe80::/10",
];

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

/// A sandbox's egress policy as the worker holds it; `open` unless set,
/// as the contract says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Egress {
    #[default]
    Open,
    Allowlist {
        cidrs: Vec<String>,
        domains: Vec<String>,
    },
    Sealed,
    Deny,
}

impl Egress {
    /// From the contract; unset is `open`, as the contract says.
    pub fn from_proto(p: Option<&pb::NetworkPolicy>) -> Self {
        let Some(p) = p else { return Egress::Open };
        match pb::EgressMode::try_from(p.mode).unwrap_or(pb::EgressMode::Unspecified) {
            pb::EgressMode::Unspecified | pb::EgressMode::Open => Egress::Open,
            pb::EgressMode::Allowlist => Egress::Allowlist {
                cidrs: p.allow_cidrs.clone(),
                domains: p.allow_domains.clone(),
            },
            pb::EgressMode::Sealed => Egress::Sealed,
            pb::EgressMode::Deny => Egress::Deny,
        }
    }

    /// The nft verdict; None for `deny`, which has no interface at all.
    /// IPv6 CIDRs are left out: sandboxes have no IPv6 route.
    fn verdict(&self) -> anyhow::Result<Option<nft::Verdict>> {
        Ok(match self {
            Egress::Open => Some(nft::Verdict::Open),
            Egress::Allowlist { cidrs, .. } => {
                let mut v4 = Vec::new();
                for c in cidrs {
                    let net: IpNet = match c.parse() {
                        Ok(n) => n,
                        Err(_) => c
                            .parse::<std::net::IpAddr>()
                            .map(IpNet::from)
                            .map_err(|_| anyhow::anyhow!("invalid CIDR {c:?}"))?,
                    };
                    if let IpNet::V4(n) = net {
                        v4.push(n.trunc());
                    }
                }
                Some(nft::Verdict::Allowlist { cidrs: v4 })
            }
            Egress::Sealed => Some(nft::Verdict::Sealed),
            Egress::Deny => None,
        })
    }
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

    /// Gives a running sandbox (its init is `pid`) its network under
    /// `policy`. The rules go in before the link comes up.
    pub async fn attach(
        &self,
        id: &str,
        slot: u32,
        pid: u32,
        policy: &Egress,
    ) -> anyhow::Result<()> {
        let Some(verdict) = policy.verdict()? else {
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
                    link::attach_veth(&self.handle, &port, self.bridge_index, pid, &inside).await;
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
        pid: u32,
        policy: &Egress,
    ) -> anyhow::Result<()> {
        self.update(id, slot, pid, policy, policy).await
    }

    /// Changes a running sandbox's policy in place. From `deny` it gets a
    /// link again; to `deny` it loses it. Addresses pinned under another
    /// policy are forgotten.
    pub async fn update(
        &self,
        id: &str,
        slot: u32,
        pid: u32,
        old: &Egress,
        new: &Egress,
    ) -> anyhow::Result<()> {
        let port = self.port_of(slot);
        match new.verdict()? {
            None => self.detach(id, slot).await,
            Some(verdict) if link::index_of(&self.handle, &port).await?.is_some() => {
                let who = self.member(id, &port, slot)?;
                self.tables.member(&who, &verdict, old != new).run().await?;
                self.remember(who.addr, id, new);
                Ok(())
            }
            Some(_) => self.attach(id, slot, pid, new).await,
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
