//! The worker's DNS resolver, the only name server sandboxes are given
//! (the gateway address, UDP and TCP port 53). It knows each sandbox by
//! its source address: under `allowlist` it answers only allowed names and
//! pins their A records into the sandbox's nft set before the answer
//! leaves, so the first connection to a just-resolved name is allowed;
//! under `open` it forwards; a name an allowlist doesn't hold is REFUSED;
//! a sandbox under `sealed` (which the rules already keep from here) or
//! an address that is no sandbox gets no answer at all. AAAA questions get an
//! empty answer, as sandboxes have no IPv6 route.

use super::Network;
use hickory_proto::op::{Message, MessageType, ResponseCode};
use hickory_proto::rr::{RData, RecordType};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long the upstream has to answer one try.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(3);

/// The first `nameserver` of a resolv.conf, on port 53.
pub fn upstream_from_resolv_conf(text: &str) -> Option<SocketAddr> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .filter_map(|a| a.trim().parse::<std::net::IpAddr>().ok())
        .map(|ip| SocketAddr::new(ip, 53))
        .next()
}

/// Whether `name` is allowed by the allowlist's domains: an entry matches
/// itself, and `*.example.com` matches every name below example.com.
pub fn allowed(name: &str, domains: &[String]) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    domains.iter().any(|d| {
        let d = d.trim_end_matches('.').to_ascii_lowercase();
        match d.strip_prefix("*.") {
            Some(suffix) => name.ends_with(&format!(".{suffix}")),
            None => name == d,
        }
    })
}

fn reply_code(q: &Message, code: ResponseCode) -> Option<Vec<u8>> {
    let mut r = Message::error_msg(q.id(), q.op_code(), code);
    r.add_queries(q.queries().to_vec());
    r.set_recursion_desired(q.recursion_desired());
    r.set_recursion_available(true);
    r.to_vec().ok()
}

/// Answers one query from `from`; None drops it (unparseable).
pub async fn answer(net: &Network, from: Ipv4Addr, query: &[u8]) -> Option<Vec<u8>> {
    let q = Message::from_vec(query).ok()?;
    if q.message_type() != MessageType::Query || q.queries().len() != 1 {
        return reply_code(&q, ResponseCode::FormErr);
    }
    let (id, policy) = net.policy_of(from)?;
    let question = &q.queries()[0];
    let name = question.name().to_ascii();
    let allowlist = match &policy {
        super::Egress::Open => None,
        super::Egress::Allowlist { domains, .. } => {
            if !allowed(&name, domains) {
                return reply_code(&q, ResponseCode::Refused);
            }
            Some(())
        }
        _ => return None,
    };
    if question.query_type() == RecordType::AAAA {
        return reply_code(&q, ResponseCode::NoError);
    }
    let upstream = net.dns_upstream()?;
    let Ok(raw) = forward(upstream, query).await else {
        return reply_code(&q, ResponseCode::ServFail);
    };
    if allowlist.is_some() {
        let Ok(resp) = Message::from_vec(&raw) else {
            return reply_code(&q, ResponseCode::ServFail);
        };
        let floor = net.pin_floor();
        let pins: Vec<(Ipv4Addr, Duration)> = resp
            .answers()
            .iter()
            .filter_map(|r| match r.data() {
                RData::A(a) => Some((a.0, Duration::from_secs(r.ttl().into()).max(floor))),
                _ => None,
            })
            .collect();
        if let Err(e) = net.pin(&id, &pins).await {
            tracing::warn!(sandbox = %id, error = %e, "could not pin resolved addresses");
            return reply_code(&q, ResponseCode::ServFail);
        }
    }
    Some(raw)
}

/// Asks the upstream over UDP, and over TCP when the answer is truncated.
async fn forward(upstream: SocketAddr, query: &[u8]) -> anyhow::Result<Vec<u8>> {
    let bind: SocketAddr = if upstream.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let sock = tokio::net::UdpSocket::bind(bind).await?;
    sock.connect(upstream).await?;
    let mut buf = vec![0u8; 65535];
    for _ in 0..2 {
        sock.send(query).await?;
        if let Ok(r) = tokio::time::timeout(UPSTREAM_TIMEOUT, sock.recv(&mut buf)).await {
            let n = r?;
            let truncated = n > 2 && buf[2] & 0x02 != 0;
            if !truncated {
                return Ok(buf[..n].to_vec());
            }
            return forward_tcp(upstream, query).await;
        }
    }
    anyhow::bail!("upstream {upstream} did not answer")
}

async fn forward_tcp(upstream: SocketAddr, query: &[u8]) -> anyhow::Result<Vec<u8>> {
    let go = async {
        let mut s = tokio::net::TcpStream::connect(upstream).await?;
        s.write_all(&(query.len() as u16).to_be_bytes()).await?;
        s.write_all(query).await?;
        let n = s.read_u16().await? as usize;
        let mut out = vec![0u8; n];
        s.read_exact(&mut out).await?;
        anyhow::Ok(out)
    };
    tokio::time::timeout(UPSTREAM_TIMEOUT, go).await?
}

/// Binds `addr` (UDP and TCP) and gives back the loop that serves it,
/// which ends when the network is gone.
pub async fn serve(
    net: Weak<Network>,
    addr: SocketAddr,
) -> anyhow::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    let udp = Arc::new(
        bind_udp(addr).map_err(|e| anyhow::anyhow!("the sandbox resolver on {addr}/udp: {e}"))?,
    );
    let tcp = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("the sandbox resolver on {addr}/tcp: {e}"))?;
    let u = {
        let net = net.clone();
        async move {
            let mut buf = vec![0u8; 4096];
            loop {
                let Ok((n, from)) = udp.recv_from(&mut buf).await else {
                    continue;
                };
                let SocketAddr::V4(from4) = from else {
                    continue;
                };
                let Some(net) = net.upgrade() else { return };
                let (udp, q) = (udp.clone(), buf[..n].to_vec());
                tokio::spawn(async move {
                    if let Some(r) = answer(&net, *from4.ip(), &q).await {
                        let _ = udp.send_to(&r, from).await;
                    }
                });
            }
        }
    };
    let t = async move {
        loop {
            let Ok((mut s, from)) = tcp.accept().await else {
                continue;
            };
            let SocketAddr::V4(from4) = from else {
                continue;
            };
            let Some(net) = net.upgrade() else { return };
            tokio::spawn(async move {
                let serve = async {
                    loop {
                        let n = s.read_u16().await? as usize;
                        let mut q = vec![0u8; n];
                        s.read_exact(&mut q).await?;
                        let Some(r) = answer(&net, *from4.ip(), &q).await else {
                            return anyhow::Ok(());
                        };
                        s.write_all(&(r.len() as u16).to_be_bytes()).await?;
                        s.write_all(&r).await?;
                    }
                };
                let _ = tokio::time::timeout(Duration::from_secs(30), serve).await;
            });
        }
    };
    Ok(async move {
        tokio::join!(u, t);
    })
}

/// The UDP socket, made through std so binding errors come back at once.
fn bind_udp(addr: SocketAddr) -> anyhow::Result<tokio::net::UdpSocket> {
    let s = std::net::UdpSocket::bind(addr)?;
    s.set_nonblocking(true)?;
    Ok(tokio::net::UdpSocket::from_std(s)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_exactly_or_below_a_wildcard() {
        let d = vec!["example.com".to_string(), "*.pypi.org".to_string()];
        assert!(allowed("example.com.", &d));
        assert!(allowed("EXAMPLE.com", &d));
        assert!(!allowed("www.example.com", &d));
        assert!(!allowed("example.com.evil.net", &d));
        assert!(allowed("files.pypi.org", &d));
        assert!(!allowed("pypi.org", &d));
        assert!(!allowed("evilpypi.org", &d));
    }

    #[test]
    fn the_upstream_is_the_first_nameserver() {
        let u = upstream_from_resolv_conf(
            "# x\nsearch a\nnameserver 10.255.255.53\nnameserver 1.1.1.1\n",
        );
        assert_eq!(u, Some("10.255.255.53:53".parse().unwrap()));
        assert_eq!(upstream_from_resolv_conf(""), None);
    }
}
