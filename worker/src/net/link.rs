//! Links, addresses and routes through rtnetlink: the worker's bridge, one
//! veth pair per sandbox, and the sandbox side configured from inside its
//! network namespace. Nothing here shells out to `ip`.

use futures::TryStreamExt;
use rtnetlink::packet_route::link::{InfoData, InfoVeth, LinkAttribute, LinkInfo};
use rtnetlink::{Handle, LinkBridge, LinkUnspec, LinkVeth, RouteMessageBuilder};
use std::net::{IpAddr, Ipv4Addr};

const ENODEV: i32 = libc::ENODEV;
const EEXIST: i32 = libc::EEXIST;

fn errno(e: &rtnetlink::Error) -> Option<i32> {
    match e {
        rtnetlink::Error::NetlinkError(m) => m.code.map(|c| -c.get()),
        _ => None,
    }
}

/// A netlink connection in the worker's own namespace.
pub fn connect() -> anyhow::Result<Handle> {
    let (conn, handle, _) = rtnetlink::new_connection()?;
    tokio::spawn(conn);
    Ok(handle)
}

/// The index of a link by name, None when there is none.
pub async fn index_of(h: &Handle, name: &str) -> anyhow::Result<Option<u32>> {
    let mut s = h.link().get().match_name(name.to_string()).execute();
    match s.try_next().await {
        Ok(Some(l)) => Ok(Some(l.header.index)),
        Ok(None) => Ok(None),
        Err(e) if errno(&e) == Some(ENODEV) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Names of every link in this namespace that starts with `prefix`.
pub async fn names_with_prefix(h: &Handle, prefix: &str) -> anyhow::Result<Vec<String>> {
    let links: Vec<_> = h.link().get().execute().try_collect().await?;
    Ok(links
        .into_iter()
        .filter_map(|l| {
            l.attributes.into_iter().find_map(|a| match a {
                LinkAttribute::IfName(n) if n.starts_with(prefix) => Some(n),
                _ => None,
            })
        })
        .collect())
}

/// The IPv4 networks of this host's own interfaces (address and prefix),
/// whatever their range: sandboxes may reach none of them (a host on a
/// public subnet has neighbours there that are not the internet).
/// Prefixes shorter than /8 are left out (no real interface has one, and
/// it would deny a large part of the internet).
pub async fn host_networks(h: &Handle) -> anyhow::Result<Vec<ipnet::Ipv4Net>> {
    use rtnetlink::packet_route::address::AddressAttribute;
    let addrs: Vec<_> = h.address().get().execute().try_collect().await?;
    let mut out = Vec::new();
    for a in addrs {
        let len = a.header.prefix_len;
        for attr in a.attributes {
            if let AddressAttribute::Local(IpAddr::V4(ip))
            | AddressAttribute::Address(IpAddr::V4(ip)) = attr
                && len >= 8
                && let Ok(n) = ipnet::Ipv4Net::new(ip, len)
            {
                out.push(n.trunc());
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

async fn add_address(h: &Handle, index: u32, addr: Ipv4Addr, len: u8) -> anyhow::Result<()> {
    match h
        .address()
        .add(index, IpAddr::V4(addr), len)
        .execute()
        .await
    {
        Err(e) if errno(&e) == Some(EEXIST) => Ok(()),
        r => Ok(r?),
    }
}

/// Creates the bridge if it is missing, with the gateway address, and
/// brings it up. Idempotent: a restarted worker finds it as it was.
pub async fn ensure_bridge(
    h: &Handle,
    name: &str,
    gateway: Ipv4Addr,
    prefix_len: u8,
    mtu: u32,
) -> anyhow::Result<u32> {
    if index_of(h, name).await?.is_none() {
        match h
            .link()
            .add(LinkBridge::new(name).mtu(mtu).build())
            .execute()
            .await
        {
            Err(e) if errno(&e) == Some(EEXIST) => {}
            r => r?,
        }
    }
    let index = index_of(h, name)
        .await?
        .ok_or_else(|| anyhow::anyhow!("bridge {name} vanished"))?;
    add_address(h, index, gateway, prefix_len).await?;
    h.link()
        .set(LinkUnspec::new_with_index(index).up().build())
        .execute()
        .await?;
    Ok(index)
}

/// Removes a link; one that is not there is already removed.
pub async fn delete(h: &Handle, name: &str) -> anyhow::Result<()> {
    let Some(index) = index_of(h, name).await? else {
        return Ok(());
    };
    match h.link().del(index).execute().await {
        Err(e) if errno(&e) == Some(ENODEV) => Ok(()),
        r => Ok(r?),
    }
}

/// How the sandbox side of a veth is set up.
#[derive(Clone, Debug)]
pub struct Inside {
    pub addr: Ipv4Addr,
    pub prefix_len: u8,
    pub gateway: Ipv4Addr,
    pub mac: [u8; 6],
    pub mtu: u32,
}

/// Creates a veth pair, its host end on the bridge, and moves the other
/// end into the network namespace `ns` as `eth0`, addressed and routed. A
/// stale host end of the same name is replaced.
pub async fn attach_veth(
    h: &Handle,
    host_name: &str,
    bridge_index: u32,
    ns: &super::NetNs,
    inside: &Inside,
) -> anyhow::Result<()> {
    let target = std::fs::File::open(ns.path())?;
    delete(h, host_name).await?;
    // One message makes the pair: the host end on the bridge and up, the
    // peer born inside the sandbox as eth0 with its MAC. Moving a link
    // between namespaces afterwards waits for an RCU grace period (about
    // 10 ms a sandbox); creating it there does not.
    let peer = rtnetlink::LinkMessageBuilder::<LinkUnspec>::new()
        .name("eth0".into())
        .address(inside.mac.to_vec())
        .mtu(inside.mtu)
        .setns_by_fd(std::os::fd::AsRawFd::as_raw_fd(&target))
        .build();
    let mut msg = LinkVeth::new(host_name, "eth0")
        .mtu(inside.mtu)
        .controller(bridge_index)
        .up()
        .build();
    for a in msg.attributes.iter_mut() {
        if let LinkAttribute::LinkInfo(infos) = a {
            for i in infos.iter_mut() {
                if let LinkInfo::Data(InfoData::Veth(InfoVeth::Peer(p))) = i {
                    *p = peer.clone();
                }
            }
        }
    }
    h.link().add(msg).execute().await?;
    drop(target);
    let set = configure_inside(ns, Some(inside.clone()));
    if let Err(e) = set.await {
        let _ = delete(h, host_name).await;
        return Err(e);
    }
    Ok(())
}

/// Runs netlink calls inside the network namespace `ns`, on a socket
/// opened there (it stays bound to that namespace).
async fn configure_inside(ns: &super::NetNs, eth0: Option<Inside>) -> anyhow::Result<()> {
    crate::ns::within_path(ns.path(), "net", crate::ns::Kind::Network, move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
            .block_on(inside_netns(eth0))
    })
    .await
}

/// Brings up the loopback of the network namespace of `pid`: a new
/// namespace has `lo` down, and servers on 127.0.0.1 need it, with or
/// without a sandbox network.
pub async fn loopback_up(ns: &super::NetNs) -> anyhow::Result<()> {
    configure_inside(ns, None).await
}

/// Brings `lo` up and, given the sandbox's eth0 (born there), its address
/// and default route.
async fn inside_netns(eth0: Option<Inside>) -> anyhow::Result<()> {
    let (conn, h, _) = rtnetlink::new_connection()?;
    tokio::spawn(conn);
    if let Some(lo) = index_of(&h, "lo").await? {
        h.link()
            .set(LinkUnspec::new_with_index(lo).up().build())
            .execute()
            .await?;
    }
    let Some(inside) = eth0 else {
        return Ok(());
    };
    let index = index_of(&h, "eth0")
        .await?
        .ok_or_else(|| anyhow::anyhow!("eth0 did not arrive in the sandbox"))?;
    h.link()
        .set(LinkUnspec::new_with_index(index).up().build())
        .execute()
        .await?;
    add_address(&h, index, inside.addr, inside.prefix_len).await?;
    let route = RouteMessageBuilder::<Ipv4Addr>::new()
        .gateway(inside.gateway)
        .output_interface(index)
        .build();
    match h.route().add(route).execute().await {
        Err(e) if errno(&e) == Some(EEXIST) => Ok(()),
        r => Ok(r?),
    }
}

/// The MTU of the interface of the default route, which sandbox links
/// take so their packets fit the way out; 1500 when there is none.
pub fn uplink_mtu() -> u32 {
    let route = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
    route
        .lines()
        .skip(1)
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 2 && f[1] == "00000000").then(|| f[0].to_string())
        })
        .and_then(|iface| std::fs::read_to_string(format!("/sys/class/net/{iface}/mtu")).ok())
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(1500)
}
