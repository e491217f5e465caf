//! Egress policies as the server stores them, and their validation. The
//! worker enforces them (nftables), the always-denied ranges included
//! (`talon_worker::net::ALWAYS_DENIED`, the one list).

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum EgressPolicy {
    Open,
    Allowlist {
        cidrs: Vec<String>,
        domains: Vec<String>,
    },
    Sealed,
    Deny,
}

pub const MAX_RULES: usize = 256;

pub fn validate_cidr(c: &str) -> Result<()> {
    let bad = || Error::InvalidArgument(format!("invalid CIDR {c:?}"));
    let (addr, len) = c.split_once('/').unwrap_or((c, ""));
    let ip: std::net::IpAddr = addr.parse().map_err(|_| bad())?;
    // Sandboxes reach the network over IPv4 only (IPv6 is refused under
    // every policy): an IPv6 entry would never match, so it is an error,
    // not a rule that silently does nothing.
    if ip.is_ipv6() {
        return Err(Error::InvalidArgument(format!(
            "{c:?}: sandbox egress is IPv4 only; an IPv6 CIDR would never match"
        )));
    }
    let max = 32;
    if !len.is_empty() {
        let n: u8 = len.parse().map_err(|_| bad())?;
        if n > max {
            return Err(bad());
        }
    }
    Ok(())
}

pub fn validate_domain(d: &str) -> Result<()> {
    let d = d.strip_prefix("*.").unwrap_or(d);
    let ok = !d.is_empty()
        && d.len() <= 253
        && d.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!("invalid domain {d:?}")))
    }
}

impl EgressPolicy {
    pub fn validate(&self) -> Result<()> {
        if let EgressPolicy::Allowlist { cidrs, domains } = self {
            if cidrs.len() + domains.len() > MAX_RULES {
                return Err(Error::InvalidArgument(format!(
                    "an allowlist holds at most {MAX_RULES} entries"
                )));
            }
            cidrs.iter().try_for_each(|c| validate_cidr(c))?;
            domains.iter().try_for_each(|d| validate_domain(d))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation() {
        assert!(validate_cidr("8.8.8.0/24").is_ok());
        assert!(validate_cidr("2001:db8::/32").is_err());
        assert!(validate_cidr("::/0").is_err());
        assert!(validate_cidr("1.2.3.4").is_ok());
        assert!(validate_cidr("1.2.3.4/33").is_err());
        assert!(validate_cidr("nope/8").is_err());
        assert!(validate_domain("pypi.org").is_ok());
        assert!(validate_domain("*.npmjs.org").is_ok());
        assert!(validate_domain("bad_domain.org").is_err());
        assert!(validate_domain("-x.org").is_err());
        for r in talon_worker::net::ALWAYS_DENIED {
            r.parse::<ipnet::IpNet>().unwrap();
        }
    }
}
