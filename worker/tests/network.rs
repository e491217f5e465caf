//! Sandbox networking against real namespaces, veths and nftables, all on
//! this machine: an "outside" network namespace the test makes stands for
//! the internet (198.51.100.0/24, TEST-NET-2: two hosts, a cloud metadata
//! address, and the server's address), reached through it as a router on
//! a link of its own (203.0.113.0/30, TEST-NET-3: the host's own network
//! there, which sandboxes may not reach), a DNS server in this process is
//! the resolver's upstream, and the probes run in a sandbox through its
//! agent. Root is required, and `nft`.
//!
//! The egress truth table: every policy × every destination × TCP, UDP
//! and ICMP, asserted cell by cell, with the policy changed at run time
//! on one sandbox (`UpdateNetworkPolicy` reaches exactly this call), for
//! a container and for a gVisor sandbox (where turning the network on or
//! off is refused at run time and applied by a restart).

mod common;

use common::{Sandbox, create, spec};
use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::{RData, Record, RecordType, rdata::A};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use talon_worker::host::HostOptions;
use talon_worker::net::{Egress, NetOptions};

const ALLOWED: &str = "198.51.100.10";
const OTHER: &str = "198.51.100.20";
const SERVER: &str = "198.51.100.30";
const METADATA: &str = "169.254.169.254";
/// The host's end of the link to the outside, and the outside's (the
/// router the internet is behind).
const UPLINK: &str = "203.0.113.1";
const ROUTER: &str = "203.0.113.2";

fn ip(args: &[&str]) {
    let out = Command::new("ip").args(args).output().expect("ip");
    assert!(
        out.status.success(),
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A network namespace with the outside hosts, each answering TCP and UDP
/// echo on `port` and ping; removed (with its servers) on drop.
struct Outside {
    ns: String,
    link: String,
    server: Child,
}

impl Outside {
    fn new(port: u16) -> Outside {
        let tag = std::process::id() % 100_000;
        let ns = format!("talon-out-{tag}");
        let link = format!("tout{tag}");
        for args in [["netns", "del", &ns], ["link", "del", &link]] {
            let _ = Command::new("ip").args(args).stderr(Stdio::null()).status();
        }
        ip(&["netns", "add", &ns]);
        ip(&[
            "link", "add", &link, "type", "veth", "peer", "name", "o", "netns", &ns,
        ]);
        ip(&["addr", "add", &format!("{UPLINK}/30"), "dev", &link]);
        ip(&["link", "set", &link, "up"]);
        let inside = |args: &[&str]| {
            let mut a = vec!["netns", "exec", ns.as_str(), "ip"];
            a.extend_from_slice(args);
            ip(&a);
        };
        inside(&["addr", "add", &format!("{ROUTER}/30"), "dev", "o"]);
        for a in [ALLOWED, OTHER, SERVER, METADATA] {
            inside(&["addr", "add", &format!("{a}/32"), "dev", "lo"]);
        }
        inside(&["link", "set", "o", "up"]);
        inside(&["link", "set", "lo", "up"]);
        for net in ["198.51.100.0/24", &format!("{METADATA}/32")] {
            ip(&["route", "replace", net, "via", ROUTER]);
        }
        let mut server = Command::new("ip")
            .args(["netns", "exec", &ns, "python3"])
            .arg(script("echo.py"))
            .arg(port.to_string())
            .args([ALLOWED, OTHER, SERVER, METADATA, ROUTER])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        wait_ready(&mut server);
        Outside { ns, link, server }
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        for net in ["198.51.100.0/24", &format!("{METADATA}/32")] {
            let _ = Command::new("ip").args(["route", "del", net]).status();
        }
        let _ = Command::new("ip")
            .args(["link", "del", &self.link])
            .status();
        let _ = Command::new("ip").args(["netns", "del", &self.ns]).status();
    }
}

fn script(name: &str) -> String {
    format!("{}/tests/net/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn wait_ready(child: &mut Child) {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
}

/// The upstream DNS: allowed.test and other.test, nothing else.
async fn upstream_dns() -> std::net::SocketAddr {
    let sock = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = sock.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 2048];
        loop {
            let (n, from) = sock.recv_from(&mut buf).await.unwrap();
            let Ok(q) = Message::from_vec(&buf[..n]) else {
                continue;
            };
            let mut r = Message::new();
            r.set_id(q.id())
                .set_message_type(MessageType::Response)
                .set_recursion_available(true)
                .add_queries(q.queries().to_vec());
            let question = &q.queries()[0];
            let name = question.name().to_ascii().to_ascii_lowercase();
            let answer = match name.trim_end_matches('.') {
                "allowed.test" => Some(ALLOWED),
                "other.test" => Some(OTHER),
                _ => None,
            };
            match answer {
                Some(a) if question.query_type() == RecordType::A => {
                    r.add_answer(Record::from_rdata(
                        question.name().clone(),
                        5,
                        RData::A(A(a.parse().unwrap())),
                    ));
                }
                Some(_) => {}
                None => {
                    r.set_response_code(ResponseCode::NXDomain);
                }
            }
            let _ = sock.send_to(&r.to_vec().unwrap(), from).await;
        }
    });
    addr
}

/// This host's address on its default route's interface (the worker's
/// address as the rest of a network knows it); the outside link's
/// address when there is no default route.
fn worker_address() -> String {
    let out = Command::new("ip")
        .args(["-4", "-o", "route", "get", "192.0.2.123"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .skip_while(|w| *w != "src")
        .nth(1)
        .map(String::from)
        .filter(|a| a != UPLINK)
        .unwrap_or_else(|| UPLINK.into())
}

fn free_port() -> u16 {
    talon_core::listen::spare_port().unwrap()
}

type Row = BTreeMap<String, (bool, bool, bool)>;

async fn probe(
    s: &mut Sandbox,
    port: u16,
    targets: &serde_json::Value,
) -> (Row, BTreeMap<String, Option<String>>) {
    std::fs::copy(script("probe.py"), s.dir().join("disk/workspace/probe.py")).unwrap();
    let cmd = format!("python3 /workspace/probe.py {port} '{targets}'");
    let (out, err, code) = s.sh(&cmd).await;
    assert_eq!(code, 0, "probe failed: {out}{err}");
    let v: serde_json::Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let mut row = Row::new();
    let mut resolved = BTreeMap::new();
    for (k, r) in v.as_object().unwrap() {
        row.insert(
            k.clone(),
            (
                r["tcp"].as_bool().unwrap(),
                r["udp"].as_bool().unwrap(),
                r["icmp"].as_bool().unwrap(),
            ),
        );
        resolved.insert(k.clone(), r["resolved"].as_str().map(String::from));
    }
    (row, resolved)
}

/// A helper process ended with the test, even when it fails: a left
/// echo would hold the test's output open.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The sandbox's network interfaces, sorted (from /proc/net/dev: gVisor
/// has no /sys/class/net).
async fn links(agent: &mut common::Agent) -> Vec<String> {
    let (out, _, _) = common::sh(agent, "awk -F: 'NR > 2 { print $1 }' /proc/net/dev").await;
    let mut v: Vec<String> = out.split_whitespace().map(String::from).collect();
    v.sort();
    v
}

/// The table for a container, then for a gVisor sandbox (one after the
/// other: both use the same outside network).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_egress_truth_table() {
    truth_table(common::Level::Container("libcontainer")).await;
    truth_table(common::Level::Gvisor).await;
}

async fn truth_table(level: common::Level) {
    eprintln!("the egress truth table, {level}:");
    let port = free_port();
    let outside = Outside::new(port);
    let upstream = upstream_dns().await;
    let env = level.host(HostOptions::default());
    let net = env
        .host
        .enable_network(NetOptions {
            bridge: "tltruth".into(),
            cidr: "10.87.0.0/24".parse().unwrap(),
            dns_upstream: Some(upstream),
            // Where the server is, as far as this worker knows.
            deny: vec![format!("{SERVER}/32").parse().unwrap()],
            ..Default::default()
        })
        .await
        .unwrap();
    let gateway = net.gateway().to_string();
    // The worker host's own echo, on its address and the gateway's.
    let mut host_echo = Command::new("python3")
        .arg(script("echo.py"))
        .arg(port.to_string())
        .args([worker_address(), gateway.clone()])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_ready(&mut host_echo);
    let _host_echo = KillOnDrop(host_echo);

    // Another sandbox, with an open policy and an echo of its own.
    let mut other = create(&env, &spec("host", (500, 128, 64))).await.unwrap();
    std::fs::copy(
        script("echo.py"),
        other.dir().join("disk/workspace/echo.py"),
    )
    .unwrap();
    let (_, _, code) = other
        .sh("nohup python3 /workspace/echo.py PORT >/dev/null 2>&1 &"
            .replace("PORT", &port.to_string())
            .as_str())
        .await;
    assert_eq!(code, 0);
    let other_addr = net
        .addr_of(env.host.held(&other.id).unwrap().slot)
        .unwrap()
        .to_string();
    // Its echo answers from inside itself.
    let (o, _, _) = other
        .sh(&format!("python3 -c \"import socket,time\nfor _ in range(50):\n  try:\n    s=socket.create_connection(('127.0.0.1',{port}),1); s.sendall(b'x'); print(s.recv(9).decode()); break\n  except OSError: time.sleep(0.1)\""))
        .await;
    assert_eq!(o.trim(), "x", "the other sandbox's echo is up");

    // Control: every destination answers when no sandbox rule is in the
    // way (from the host), so a blocked cell is the policy's doing.
    for a in [
        ALLOWED,
        OTHER,
        SERVER,
        METADATA,
        ROUTER,
        &worker_address(),
        &gateway,
        &other_addr,
    ] {
        let mut c = std::net::TcpStream::connect_timeout(
            &format!("{a}:{port}").parse().unwrap(),
            Duration::from_secs(2),
        )
        .unwrap_or_else(|e| panic!("control: {a}:{port} does not answer: {e}"));
        std::io::Write::write_all(&mut c, b"ok").unwrap();
        let mut buf = [0u8; 2];
        std::io::Read::read_exact(&mut c, &mut buf).unwrap();
        assert_eq!(&buf, b"ok", "control: {a}");
    }

    let targets = serde_json::json!({
        "allowlisted host": ["allowed.test", ALLOWED],
        "other host": ["other.test", OTHER],
        "metadata": [METADATA, METADATA],
        "worker": [worker_address(), worker_address()],
        "server": [SERVER, SERVER],
        "host network": [ROUTER, ROUTER],
        "other sandbox": [other_addr, other_addr],
        "gateway": [gateway, gateway],
    });

    let mut s = create(&env, &level.spec("host", (500, 128, 64)))
        .await
        .unwrap();
    let (resolv, _, _) = s.sh("cat /etc/resolv.conf").await;
    assert!(
        resolv.contains(&format!("nameserver {}", net.gateway())),
        "{resolv}"
    );

    let allowlist = Egress::Allowlist {
        cidrs: vec![],
        domains: vec!["allowed.test".into()],
    };
    let all = (true, true, true);
    let none = (false, false, false);
    let mut failures = Vec::new();
    let mut last = Egress::Open;
    for (name, policy) in [
        ("open", Egress::Open),
        ("allowlist", allowlist),
        ("sealed", Egress::Sealed),
        ("deny", Egress::Deny),
        // And back: a sandbox leaving deny gets its link again.
        ("open again", Egress::Open),
    ] {
        let link_changes = matches!(policy, Egress::Deny) != matches!(last, Egress::Deny);
        last = policy.clone();
        match env
            .host
            .update_network_policy(&s.id, 1, policy.clone())
            .await
        {
            Ok(_) => assert!(
                level != common::Level::Gvisor || !link_changes,
                "{name}: gVisor took a link change at run time"
            ),
            // gVisor's netstack takes the sandbox's links when it starts:
            // turning the network on or off is refused at run time, and
            // applied by a restart with the policy.
            Err(e) if level == common::Level::Gvisor && link_changes => {
                assert!(e.to_string().contains("only when it starts"), "{e:#}");
                env.host.stop(&s.id, 1).await.unwrap();
                env.host
                    .start(&s.id, 1, Some(policy.clone()))
                    .await
                    .unwrap();
                s.agent = env.host.agent(&s.id).await.unwrap();
            }
            Err(e) => panic!("{level}: {name}: {e:#}"),
        }
        let (row, resolved) = probe(&mut s, port, &targets).await;
        let ifaces = links(&mut s.agent).await;
        let expect_eth0 = !matches!(policy, Egress::Deny);
        assert_eq!(
            ifaces.contains(&"eth0".to_string()),
            expect_eth0,
            "{name}: interfaces {ifaces:?}"
        );
        assert!(ifaces.contains(&"lo".to_string()));
        // Loopback works under every policy (a new netns has lo down).
        let (lo, _, _) = s
            .sh("python3 -c \"import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(); socket.create_connection(s.getsockname()); print('lo ok')\"")
            .await;
        assert_eq!(lo.trim(), "lo ok", "{name}: loopback");
        for (dest, got) in &row {
            let want = match (&policy, dest.as_str()) {
                (Egress::Open, "allowlisted host" | "other host") => all,
                (Egress::Allowlist { .. }, "allowlisted host") => all,
                // The resolver answers (over TCP and UDP) only those that
                // may resolve; under sealed and deny no packet leaves, not
                // even to be REFUSED.
                (Egress::Open | Egress::Allowlist { .. }, "resolver") => (true, true, false),
                _ => none,
            };
            eprintln!(
                "{name:>10} | {dest:<16} | tcp {} udp {} icmp {}",
                got.0, got.1, got.2
            );
            if *got != want {
                failures.push(format!(
                    "{level}: {name} → {dest}: got {got:?}, want {want:?}"
                ));
            }
        }
        // The resolver: open answers any name, allowlist only its own,
        // sealed and deny none.
        let names = (
            resolved["allowlisted host"].is_some(),
            resolved["other host"].is_some(),
        );
        let want_names = match policy {
            Egress::Open => (true, true),
            Egress::Allowlist { .. } => (true, false),
            _ => (false, false),
        };
        if names != want_names {
            failures.push(format!(
                "{level}: {name}: resolved {names:?}, want {want_names:?}"
            ));
        }
    }
    drop(s);
    drop(other);
    drop(outside);
    net.remove().await;
    assert!(
        failures.is_empty(),
        "truth table cells wrong:\n{}",
        failures.join("\n")
    );
}

/// A sandbox created under a policy has it from its first packet, and a
/// worker that restarts re-adopts its sandboxes' links and rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_restarted_worker_re_adopts_the_network() {
    common::require_root();
    let upstream = upstream_dns().await;
    let opts = NetOptions {
        bridge: "tladopt".into(),
        cidr: "10.86.0.0/24".parse().unwrap(),
        dns_upstream: Some(upstream),
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o711),
    )
    .unwrap();
    let worker = || {
        let rt = talon_worker::runtime::OciCli::libcontainer(
            env!("CARGO_BIN_EXE_talon-oci"),
            &[],
            dir.path().join("runtime-state"),
        );
        talon_worker::host::SandboxHost::with_options(
            dir.path(),
            Arc::new(rt),
            &common::agent_binary(),
            HostOptions::default(),
        )
        .unwrap()
    };
    let first = worker();
    let net = first.enable_network(opts.clone()).await.unwrap();
    let mut spec = spec("host", (500, 128, 64));
    spec.network_policy = Some(talon_proto::v1::NetworkPolicy {
        mode: talon_proto::v1::EgressMode::Sealed as i32,
        ..Default::default()
    });
    let id = common::unique_id("n");
    first.create(&id, 1, &spec).await.unwrap();
    let mut agent = first.agent(&id).await.unwrap();
    assert_eq!(links(&mut agent).await, vec!["eth0", "lo"]);
    assert_eq!(net.tables().sandbox_chains().await, vec![id.clone()]);
    let (out, _, _) = common::sh(&mut agent, "getent hosts allowed.test").await;
    assert_eq!(out, "", "sealed: no name resolves");

    // The worker goes away (its resolver with it); the sandbox stays.
    drop(net);
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Leftovers of a sandbox that is no longer held are swept.
    let stray = format!("{}v999", opts.bridge);
    ip(&[
        "link",
        "add",
        &stray,
        "type",
        "veth",
        "peer",
        "name",
        &format!("{stray}p"),
    ]);
    let again = worker();
    let net2 = again.enable_network(opts).await.unwrap();
    assert!(
        !std::path::Path::new("/sys/class/net").join(&stray).exists(),
        "a stray link survived the sweep"
    );
    assert_eq!(net2.tables().sandbox_chains().await, vec![id.clone()]);
    assert_eq!(
        net2.policy_of("10.86.0.2".parse::<Ipv4Addr>().unwrap()),
        Some((id.clone(), Egress::Sealed))
    );
    assert_eq!(
        links(&mut agent).await,
        vec!["eth0", "lo"],
        "the link was kept"
    );
    again
        .update_network_policy(&id, 1, Egress::Open)
        .await
        .unwrap();
    let (out, _, code) = common::sh(&mut agent, "getent hosts allowed.test").await;
    assert_eq!((out.split_whitespace().next(), code), (Some(ALLOWED), 0));
    again.delete(&id, 1).await.unwrap();
    assert!(net2.tables().sandbox_chains().await.is_empty());
    assert!(
        !std::path::Path::new("/sys/class/net")
            .join(format!("{}v0", "tladopt"))
            .exists()
    );
    net2.remove().await;
}
