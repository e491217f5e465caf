//! Listening TCP sockets inside the sandbox's network namespace, from
//! /proc/net/tcp{,6}, with their owning process where /proc tells.

use std::collections::HashMap;
use std::net::{Ipv4Addr, Ipv6Addr};
use talon_proto::v1 as pb;

const LISTEN: &str = "0A";

fn socket_owners() -> HashMap<u64, u32> {
    let mut out = HashMap::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Ok(pid) = p.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path()) {
                let l = link.to_string_lossy();
                if let Some(ino) = l.strip_prefix("socket:[").and_then(|r| r.strip_suffix(']'))
                    && let Ok(ino) = ino.parse()
                {
                    out.entry(ino).or_insert(pid);
                }
            }
        }
    }
    out
}

fn addr(hex: &str, v6: bool) -> Option<String> {
    if v6 {
        if hex.len() != 32 {
            return None;
        }
        let mut bytes = [0u8; 16];
        // Four little-endian 32-bit words.
        for w in 0..4 {
            let word = u32::from_str_radix(&hex[w * 8..w * 8 + 8], 16).ok()?;
            bytes[w * 4..w * 4 + 4].copy_from_slice(&word.to_le_bytes());
        }
        Some(Ipv6Addr::from(bytes).to_string())
    } else {
        let v = u32::from_str_radix(hex, 16).ok()?;
        Some(Ipv4Addr::from(v.to_le_bytes()).to_string())
    }
}

pub fn parse(table: &str, v6: bool, owners: &HashMap<u64, u32>) -> Vec<pb::ListeningPort> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 10 || f[3] != LISTEN {
                return None;
            }
            let (a, p) = f[1].split_once(':')?;
            let port = u32::from_str_radix(p, 16).ok()?;
            let inode: u64 = f[9].parse().ok()?;
            Some(pb::ListeningPort {
                port,
                protocol: if v6 { "tcp6" } else { "tcp" }.into(),
                address: addr(a, v6)?,
                pid: owners.get(&inode).copied().unwrap_or(0),
            })
        })
        .collect()
}

pub fn listening() -> Vec<pb::ListeningPort> {
    let owners = socket_owners();
    let mut out = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        if let Ok(t) = std::fs::read_to_string(file) {
            out.extend(parse(&t, v6, &owners));
        }
    }
    out.sort_by(|a, b| (a.port, &a.protocol).cmp(&(b.port, &b.protocol)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_listeners_only() {
        let t = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:1F91 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 12346 1 0000000000000000 100 0 0 10 0\n";
        let owners = HashMap::from([(12345u64, 42u32)]);
        let p = parse(t, false, &owners);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].port, p[0].address.as_str(), p[0].pid),
            (8080, "127.0.0.1", 42)
        );
        let t6 = "header\n 0: 00000000000000000000000001000000:0050 00000000000000000000000000000000:0000 0A 0 0 0 0 0 0 777 1\n";
        let p6 = parse(t6, true, &HashMap::new());
        assert_eq!((p6[0].port, p6[0].address.as_str()), (80, "::1"));
    }
}
