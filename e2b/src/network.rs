//! E2B's network options as Talon's egress policy: no internet access is
//! a sealed sandbox, `allowOut` (CIDRs, IPs or domain names) an allowlist.
//! Talon denies private ranges under every policy and has no deny list
//! beyond "what is not allowed", so `denyOut` may only be `0.0.0.0/0`.

use crate::error::ApiError;
use crate::model::Network;
use talon_proto::v1 as pb;

pub fn policy(
    allow_internet_access: Option<bool>,
    network: Option<&Network>,
) -> Result<Option<pb::NetworkPolicy>, ApiError> {
    let sealed = || pb::NetworkPolicy {
        mode: pb::EgressMode::Sealed as i32,
        ..Default::default()
    };
    if let Some(n) = network {
        if n.allow_public_traffic == Some(true) {
            return Err(ApiError::unsupported(
                "allowPublicTraffic (previews always need a signed link or a credential)",
            ));
        }
        let set = |v: &Option<serde_json::Value>| v.as_ref().is_some_and(|v| !v.is_null());
        if n.dns_servers.as_ref().is_some_and(|d| !d.is_empty())
            || n.https_ports.as_ref().is_some_and(|p| !p.is_empty())
            || set(&n.egress_proxy)
            || set(&n.mask_request_host)
            || set(&n.rules)
        {
            return Err(ApiError::unsupported(
                "dnsServers, egressProxy, maskRequestHost, httpsPorts and rules",
            ));
        }
        let deny = n.deny_out.clone().unwrap_or_default();
        if !deny.is_empty() && deny != ["0.0.0.0/0"] {
            return Err(ApiError::bad_request(
                "denyOut may only be [\"0.0.0.0/0\"]: Talon denies what is not allowed, and private ranges always",
            ));
        }
        let allow = n.allow_out.clone().unwrap_or_default();
        if !allow.is_empty() {
            let (mut cidrs, mut domains) = (vec![], vec![]);
            for a in allow {
                if a.contains('/') {
                    cidrs.push(a);
                } else if let Ok(ip) = a.parse::<std::net::IpAddr>() {
                    cidrs.push(format!("{ip}/{}", if ip.is_ipv4() { 32 } else { 128 }));
                } else {
                    domains.push(a);
                }
            }
            return Ok(Some(pb::NetworkPolicy {
                mode: pb::EgressMode::Allowlist as i32,
                allow_cidrs: cidrs,
                allow_domains: domains,
            }));
        }
        if !deny.is_empty() || n.allow_internet_access == Some(false) {
            return Ok(Some(sealed()));
        }
    }
    Ok((allow_internet_access == Some(false)).then(sealed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2b_options_become_policies() {
        assert_eq!(policy(None, None).unwrap(), None);
        assert_eq!(
            policy(Some(false), None).unwrap().unwrap().mode,
            pb::EgressMode::Sealed as i32
        );
        let n = Network {
            allow_out: Some(vec![
                "1.1.1.1".into(),
                "10.0.0.0/8".into(),
                "pypi.org".into(),
            ]),
            deny_out: Some(vec!["0.0.0.0/0".into()]),
            ..Default::default()
        };
        let p = policy(None, Some(&n)).unwrap().unwrap();
        assert_eq!(p.mode, pb::EgressMode::Allowlist as i32);
        assert_eq!(p.allow_cidrs, ["1.1.1.1/32", "10.0.0.0/8"]);
        assert_eq!(p.allow_domains, ["pypi.org"]);
        let deny_one = Network {
            deny_out: Some(vec!["8.8.8.8".into()]),
            ..Default::default()
        };
        assert_eq!(policy(None, Some(&deny_one)).unwrap_err().status, 400);
        let public = Network {
            allow_public_traffic: Some(true),
            ..Default::default()
        };
        assert_eq!(policy(None, Some(&public)).unwrap_err().status, 501);
    }
}
