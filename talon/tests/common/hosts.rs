//! Hosts as network namespaces, for the multi-node tests: a `Lan` is a
//! bridge in the test's own namespace (where the servers listen, on its
//! address); each `Host` is a network namespace joined to it by a veth
//! pair, with an address of its own, where a worker runs. Cutting a host's
//! link (its veth down) is a partition; the host's processes keep running.
//! Only the network is namespaced: mounts and cgroups are the machine's, so
//! a worker's sandboxes and disks are where the test's cleanup finds them.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bridge with an address, on a /24 of its own.
pub struct Lan {
    bridge: String,
    /// The first three octets.
    net: String,
    tag: String,
    hosts: u32,
}

impl Lan {
    pub fn new() -> Lan {
        // Unique across the parallel tests of one binary and across runs.
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let tag = format!("{}{}", std::process::id() % 10000, n);
        let net = format!("10.213.{}", (std::process::id() * 7 + n) % 250 + 1);
        let bridge = format!("tlb{tag}");
        let _ = Command::new("ip").args(["link", "del", &bridge]).output();
        ip(&["link", "add", &bridge, "type", "bridge"]);
        ip(&["addr", "add", &format!("{net}.1/24"), "dev", &bridge]);
        ip(&["link", "set", &bridge, "up"]);
        Lan {
            bridge,
            net,
            tag,
            hosts: 0,
        }
    }

    /// The bridge's address: where servers listen for the hosts.
    pub fn gateway(&self) -> String {
        format!("{}.1", self.net)
    }

    /// A new host on the LAN.
    pub fn host(&mut self) -> Host {
        self.hosts += 1;
        let i = self.hosts;
        let netns = format!("tlh{}-{i}", self.tag);
        let outer = format!("tlv{}-{i}", self.tag);
        let addr = format!("{}.{}", self.net, 10 + i);
        let _ = Command::new("ip").args(["netns", "del", &netns]).output();
        ip(&["netns", "add", &netns]);
        ip(&[
            "link", "add", &outer, "type", "veth", "peer", "name", "eth0", "netns", &netns,
        ]);
        ip(&["link", "set", &outer, "master", &self.bridge]);
        ip(&["link", "set", &outer, "up"]);
        let inns = |args: &[&str]| {
            let mut a = vec!["-n", netns.as_str()];
            a.extend_from_slice(args);
            ip(&a);
        };
        inns(&["addr", "add", &format!("{addr}/24"), "dev", "eth0"]);
        inns(&["link", "set", "eth0", "up"]);
        inns(&["link", "set", "lo", "up"]);
        Host { netns, outer, addr }
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", &self.bridge])
            .output();
    }
}

/// A network namespace on a `Lan`.
pub struct Host {
    pub netns: String,
    /// The veth end on the bridge.
    outer: String,
    pub addr: String,
}

impl Host {
    /// Cuts the host off the LAN (its link down): a partition.
    pub fn cut(&self) {
        ip(&["link", "set", &self.outer, "down"]);
    }

    /// Heals the partition.
    pub fn heal(&self) {
        ip(&["link", "set", &self.outer, "up"]);
    }

    /// `program` run in the host's network namespace (nsenter execs it:
    /// the child's pid is the program's).
    pub fn command(&self, program: &std::path::Path) -> Command {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/run/netns/{}", self.netns))
            .arg("--")
            .arg(program);
        c
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // Its veth pair goes with it.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .output();
    }
}
