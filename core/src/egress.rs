//! The egress policy, one model for the server (which stores and validates
//! it) and the worker (which enforces it): its four modes, its validation,
//! its stored form, and the ranges no policy may open. Fail closed: a mode
//! or a stored policy this code does not know is an error, never `open`.

use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr};

/// Ranges denied before any policy, whatever the policy: private, shared,
/// loopback, link-local (cloud metadata), multicast and reserved, and
/// unique-local and link-local IPv6 (IPv6 is refused as a whole besides).
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

/// Most entries (CIDRs and domains together) of one allowlist.
pub const MAX_RULES: usize = 256;

/// What a sandbox may reach. The stored form (JSON, `{"mode": "open"}`,
/// `{"mode": "allowlist", "cidrs": [...], "domains": [...]}`) is the one
/// the server's rows and the worker's state files have always held.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase", deny_unknown_fields)]
pub enum EgressPolicy {
    /// Any public destination.
    #[default]
    Open,
    /// Only the listed IPv4 CIDRs, and the names the resolver pins.
    Allowlist {
        cidrs: Vec<String>,
        domains: Vec<String>,
    },
    /// The interface stays; no packet leaves it.
    Sealed,
    /// No interface but lo.
    Deny,
}

/// The contract's modes (`talon.v1.EgressMode`), by number, so this crate
/// needs no generated types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EgressMode {
    Unspecified = 0,
    Open = 1,
    Allowlist = 2,
    Sealed = 3,
    Deny = 4,
}

impl TryFrom<i32> for EgressMode {
    type Error = PolicyError;
    fn try_from(v: i32) -> Result<Self, PolicyError> {
        Ok(match v {
            0 => EgressMode::Unspecified,
            1 => EgressMode::Open,
            2 => EgressMode::Allowlist,
            3 => EgressMode::Sealed,
            4 => EgressMode::Deny,
            n => return Err(PolicyError::UnknownMode(n)),
        })
    }
}

/// A policy as a request or a command carries it, before validation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyParts {
    pub mode: i32,
    pub cidrs: Vec<String>,
    pub domains: Vec<String>,
}

/// Why a policy is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("unknown egress mode {0}")]
    UnknownMode(i32),
    #[error("allow_cidrs and allow_domains are only for EGRESS_MODE_ALLOWLIST")]
    RulesWithoutAllowlist,
    #[error("an allowlist holds at most {MAX_RULES} entries")]
    TooManyRules,
    #[error("invalid CIDR {0:?}")]
    InvalidCidr(String),
    #[error("{0:?}: sandbox egress is IPv4 only; an IPv6 CIDR would never match")]
    Ipv6Cidr(String),
    #[error("invalid domain {0:?}")]
    InvalidDomain(String),
    #[error("stored egress policy is corrupt ({0}); refusing to read it as open")]
    Corrupt(String),
}

impl TryFrom<PolicyParts> for EgressPolicy {
    type Error = PolicyError;
    /// Unspecified means open (as the contract says), but only without
    /// rules; rules belong to an allowlist alone.
    fn try_from(p: PolicyParts) -> Result<Self, PolicyError> {
        let rules = !p.cidrs.is_empty() || !p.domains.is_empty();
        let policy = match (EgressMode::try_from(p.mode)?, rules) {
            (EgressMode::Unspecified | EgressMode::Open, false) => EgressPolicy::Open,
            (EgressMode::Allowlist, _) => EgressPolicy::Allowlist {
                cidrs: p.cidrs,
                domains: p.domains,
            },
            (EgressMode::Sealed, false) => EgressPolicy::Sealed,
            (EgressMode::Deny, false) => EgressPolicy::Deny,
            _ => return Err(PolicyError::RulesWithoutAllowlist),
        };
        policy.validate()?;
        Ok(policy)
    }
}

impl From<&EgressPolicy> for PolicyParts {
    fn from(p: &EgressPolicy) -> PolicyParts {
        let (mode, cidrs, domains) = match p {
            EgressPolicy::Open => (EgressMode::Open, vec![], vec![]),
            EgressPolicy::Allowlist { cidrs, domains } => {
                (EgressMode::Allowlist, cidrs.clone(), domains.clone())
            }
            EgressPolicy::Sealed => (EgressMode::Sealed, vec![], vec![]),
            EgressPolicy::Deny => (EgressMode::Deny, vec![], vec![]),
        };
        PolicyParts {
            mode: mode as i32,
            cidrs,
            domains,
        }
    }
}

impl EgressPolicy {
    /// The mode's name, as logs and metrics say it.
    pub fn name(&self) -> &'static str {
        match self {
            EgressPolicy::Open => "open",
            EgressPolicy::Allowlist { .. } => "allowlist",
            EgressPolicy::Sealed => "sealed",
            EgressPolicy::Deny => "deny",
        }
    }

    pub fn validate(&self) -> Result<(), PolicyError> {
        if let EgressPolicy::Allowlist { cidrs, domains } = self {
            if cidrs.len() + domains.len() > MAX_RULES {
                return Err(PolicyError::TooManyRules);
            }
            for c in cidrs {
                parse_cidr(c)?;
            }
            for d in domains {
                validate_domain(d)?;
            }
        }
        Ok(())
    }

    /// The stored form.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(self).expect("a policy serializes")
    }

    /// Reads the stored form, validated: anything else is `Corrupt`.
    pub fn from_stored(s: &str) -> Result<EgressPolicy, PolicyError> {
        let p: EgressPolicy =
            serde_json::from_str(s).map_err(|e| PolicyError::Corrupt(e.to_string()))?;
        p.validate()
            .map_err(|e| PolicyError::Corrupt(e.to_string()))?;
        Ok(p)
    }

    /// An allowlist's CIDRs as networks (a bare address is a /32).
    pub fn ipv4_cidrs(&self) -> Result<Vec<(Ipv4Addr, u8)>, PolicyError> {
        match self {
            EgressPolicy::Allowlist { cidrs, .. } => cidrs.iter().map(|c| parse_cidr(c)).collect(),
            _ => Ok(vec![]),
        }
    }
}

/// An IPv4 CIDR or address: its network address (host bits cleared) and
/// prefix length.
pub fn parse_cidr(c: &str) -> Result<(Ipv4Addr, u8), PolicyError> {
    let bad = || PolicyError::InvalidCidr(c.to_string());
    let (addr, len) = c.split_once('/').unwrap_or((c, "32"));
    let ip: IpAddr = addr.parse().map_err(|_| bad())?;
    let IpAddr::V4(ip) = ip else {
        return Err(PolicyError::Ipv6Cidr(c.to_string()));
    };
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u8 = len.parse().map_err(|_| bad())?;
    if n > 32 {
        return Err(bad());
    }
    let mask = if n == 0 { 0 } else { u32::MAX << (32 - n) };
    Ok((Ipv4Addr::from(u32::from(ip) & mask), n))
}

/// A DNS name, or `*.` and one.
pub fn validate_domain(d: &str) -> Result<(), PolicyError> {
    let name = d.strip_prefix("*.").unwrap_or(d);
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if ok {
        Ok(())
    } else {
        Err(PolicyError::InvalidDomain(d.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(mode: i32, cidrs: &[&str], domains: &[&str]) -> PolicyParts {
        PolicyParts {
            mode,
            cidrs: cidrs.iter().map(|s| s.to_string()).collect(),
            domains: domains.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn cidrs_and_domains() {
        assert_eq!(
            parse_cidr("8.8.8.7/24"),
            Ok(("8.8.8.0".parse().unwrap(), 24))
        );
        assert_eq!(parse_cidr("1.2.3.4"), Ok(("1.2.3.4".parse().unwrap(), 32)));
        assert_eq!(parse_cidr("0.0.0.0/0"), Ok(("0.0.0.0".parse().unwrap(), 0)));
        for bad in ["1.2.3.4/33", "nope/8", "1.2.3.4/", "1.2.3.4/+8", ""] {
            assert_eq!(
                parse_cidr(bad),
                Err(PolicyError::InvalidCidr(bad.into())),
                "{bad}"
            );
        }
        for v6 in ["::/0", "2001:db8::/32"] {
            assert_eq!(parse_cidr(v6), Err(PolicyError::Ipv6Cidr(v6.into())));
        }
        assert!(validate_domain("pypi.org").is_ok());
        assert!(validate_domain("*.npmjs.org").is_ok());
        assert!(validate_domain("bad_domain.org").is_err());
        assert!(validate_domain("-x.org").is_err());
        for r in ALWAYS_DENIED {
            let (addr, len) = r.split_once('/').unwrap();
            assert!(
                addr.parse::<IpAddr>().is_ok() && len.parse::<u8>().is_ok(),
                "{r}"
            );
        }
    }

    #[test]
    fn parts_become_a_policy_or_a_clear_error() {
        assert_eq!(
            EgressPolicy::try_from(parts(0, &[], &[])),
            Ok(EgressPolicy::Open)
        );
        assert_eq!(
            EgressPolicy::try_from(parts(3, &[], &[])),
            Ok(EgressPolicy::Sealed)
        );
        assert_eq!(
            EgressPolicy::try_from(parts(4, &[], &[])),
            Ok(EgressPolicy::Deny)
        );
        let a = EgressPolicy::try_from(parts(2, &["1.2.3.0/24"], &["x.org"])).unwrap();
        assert_eq!(PolicyParts::from(&a), parts(2, &["1.2.3.0/24"], &["x.org"]));
        assert_eq!(
            EgressPolicy::try_from(parts(9, &[], &[])),
            Err(PolicyError::UnknownMode(9))
        );
        assert_eq!(
            EgressPolicy::try_from(parts(1, &["1.2.3.4"], &[])),
            Err(PolicyError::RulesWithoutAllowlist)
        );
        let many: Vec<String> = (0..=MAX_RULES)
            .map(|i| format!("10.0.{}.{}", i / 256, i % 256))
            .collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            EgressPolicy::try_from(parts(2, &many, &[])),
            Err(PolicyError::TooManyRules)
        );
    }

    /// Fail closed: a stored policy that doesn't read is an error, never
    /// `open` (it used to be read as open).
    #[test]
    fn a_corrupt_stored_policy_is_refused() {
        for p in [
            EgressPolicy::Open,
            EgressPolicy::Sealed,
            EgressPolicy::Deny,
            EgressPolicy::Allowlist {
                cidrs: vec!["1.2.3.0/24".into()],
                domains: vec!["*.x.org".into()],
            },
        ] {
            assert_eq!(EgressPolicy::from_stored(&p.to_stored()), Ok(p));
        }
        assert_eq!(
            EgressPolicy::from_stored(r#"{"mode":"open"}"#),
            Ok(EgressPolicy::Open)
        );
        for bad in [
            "",
            "null",
            "{}",
            r#"{"mode":"opne"}"#,
            r#"{"mode":"allowlist"}"#,
            r#"{"mode":"allowlist","cidrs":["::/0"],"domains":[]}"#,
            r#"{"mode":"allowlist","cidrs":[],"domains":[],"extra":1}"#,
        ] {
            assert!(
                matches!(EgressPolicy::from_stored(bad), Err(PolicyError::Corrupt(_))),
                "{bad}"
            );
        }
    }
}
