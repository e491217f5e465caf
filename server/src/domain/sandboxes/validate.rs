//! A create request's rules: labels, metadata, environment, resources,
//! idempotency keys.

use super::NewSandbox;
use crate::config::Resources;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

pub(super) fn validate_labels(labels: &BTreeMap<String, String>) -> Result<()> {
    if labels.len() > 64 {
        return Err(Error::InvalidArgument("at most 64 labels".into()));
    }
    for (k, v) in labels {
        let key_ok = !k.is_empty()
            && k.len() <= 63
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b));
        if !key_ok {
            return Err(Error::InvalidArgument(format!(
                "label key {k:?}: a key is 1 to 63 letters, digits, '.', '_', '-' or '/'"
            )));
        }
        if v.len() > 255 || v.contains([',', '=']) || v.chars().any(char::is_control) {
            return Err(Error::InvalidArgument(format!(
                "label {k:?}: a value is at most 255 bytes, without ',', '=' or control characters"
            )));
        }
    }
    Ok(())
}

/// Metadata holds text the caller keeps for itself, so values are free
/// (unlike labels, which have a selector syntax); only size and control
/// characters are held to limits, the same on create and in a list filter.
pub(super) fn validate_metadata(m: &BTreeMap<String, String>) -> Result<()> {
    if m.len() > 64 {
        return Err(Error::InvalidArgument("at most 64 metadata entries".into()));
    }
    let mut total = 0;
    for (k, v) in m {
        if k.is_empty() || k.len() > 256 || k.chars().any(char::is_control) {
            return Err(Error::InvalidArgument(format!(
                "metadata key {k:?}: a key is 1 to 256 bytes without control characters"
            )));
        }
        if v.len() > 4096 || v.chars().any(char::is_control) {
            return Err(Error::InvalidArgument(format!(
                "metadata {k:?}: a value is at most 4096 bytes without control characters"
            )));
        }
        total += k.len() + v.len();
    }
    if total > 32 * 1024 {
        return Err(Error::InvalidArgument(
            "metadata is larger than 32 KiB".into(),
        ));
    }
    Ok(())
}

/// A list's metadata filter, held to the same rules as metadata itself.
pub fn metadata_filter(m: BTreeMap<String, String>) -> Result<Vec<(String, String)>> {
    validate_metadata(&m)?;
    Ok(m.into_iter().collect())
}

/// 1 to 128 printable ASCII characters.
pub(super) fn validate_idempotency_key(k: &str) -> Result<()> {
    if k.is_empty() || k.len() > 128 || !k.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::InvalidArgument(
            "idempotency_key is 1 to 128 printable ASCII characters".into(),
        ));
    }
    Ok(())
}

/// A create request's fingerprint: sha256 of a canonical JSON of what it
/// asks for (the key aside), so a retry with the same key can be told
/// from a different request that reused it.
pub(super) fn request_hash(n: &NewSandbox) -> String {
    let millis = |d: Option<std::time::Duration>| d.map(|d| d.as_millis() as u64);
    let canonical = serde_json::json!({
        "image": n.image,
        "resources": [n.cpu_millis, n.memory_mib, n.disk_mib, n.max_pids],
        "labels": n.labels,
        "env": n.env,
        "secret_names": n.secret_names,
        "network_policy": n.network_policy.as_ref().map(|p| p.to_stored()),
        "timeout_ms": millis(n.timeout),
        "timeout_action": n.timeout_action.map(|a| a.as_str()),
        "metadata": n.metadata,
        "idle_timeout_ms": millis(n.idle_timeout),
        "auto_resume": n.auto_resume,
        "snapshot_id": n.snapshot_id,
        "isolation": n.isolation.name(),
        "volume_mounts": n
            .volume_mounts
            .iter()
            .map(|m| (m.name.as_str(), m.path.as_str(), m.read_only))
            .collect::<Vec<_>>(),
        "restart_policy": n.restart_policy.map(|p| p.as_str()),
        "worker_loss": n.worker_loss.map(|l| l.as_str()),
    });
    crate::auth::sha256_hex(&canonical.to_string())
}

pub(super) fn validate_env(env: &BTreeMap<String, String>) -> Result<()> {
    let mut total = 0;
    for (k, v) in env {
        let ok = !k.is_empty()
            && !k.as_bytes()[0].is_ascii_digit()
            && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !ok {
            return Err(Error::InvalidArgument(format!(
                "invalid environment variable name {k:?}"
            )));
        }
        if v.contains('\0') {
            return Err(Error::InvalidArgument(format!(
                "environment variable {k} contains NUL"
            )));
        }
        total += k.len() + v.len() + 2;
    }
    if total > 128 * 1024 {
        return Err(Error::InvalidArgument(
            "environment is larger than 128 KiB".into(),
        ));
    }
    Ok(())
}

/// Fills unset resources with the defaults and holds them to the maximums.
pub(super) fn resolve_resources(
    n: &mut NewSandbox,
    defaults: Resources,
    max: Resources,
) -> Result<()> {
    let (d, m) = (defaults, max);
    for (name, v, def, max) in [
        ("cpu_millis", &mut n.cpu_millis, d.cpu_millis, m.cpu_millis),
        ("memory_mib", &mut n.memory_mib, d.memory_mib, m.memory_mib),
        ("disk_mib", &mut n.disk_mib, d.disk_mib, m.disk_mib),
        ("max_pids", &mut n.max_pids, d.max_pids, m.max_pids),
    ] {
        if *v < 0 {
            return Err(Error::InvalidArgument(format!(
                "resources.{name} must not be negative"
            )));
        }
        if *v == 0 {
            *v = def;
        }
        if *v > max {
            return Err(Error::InvalidArgument(format!(
                "resources.{name} is above the maximum of {max}"
            )));
        }
    }
    if n.cpu_millis < 10 || n.memory_mib < 16 {
        return Err(Error::InvalidArgument(
            "a sandbox needs at least 10 cpu millis and 16 MiB".into(),
        ));
    }
    Ok(())
}

/// `k=v,k2=v2`: the labels a list must match.
pub fn parse_label_selector(s: &str) -> Result<Vec<(String, String)>> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| {
                    Error::InvalidArgument(format!("label selector {p:?} is not key=value"))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn metadata_and_idempotency_keys() {
        assert!(validate_metadata(&labels(&[("user", "a b=c, d"), ("ü", "")])).is_ok());
        for bad in [
            labels(&[("", "a")]),
            labels(&[("a\nb", "a")]),
            labels(&[("a", "x\u{0}y")]),
            labels(&[("a", &"x".repeat(4097))]),
            labels(&[(&"k".repeat(257), "")]),
        ] {
            assert!(validate_metadata(&bad).is_err(), "{bad:?}");
        }
        let many: BTreeMap<String, String> =
            (0..65).map(|i| (format!("k{i}"), String::new())).collect();
        assert!(validate_metadata(&many).is_err());
        let big: BTreeMap<String, String> = (0..9)
            .map(|i| (format!("k{i}"), "v".repeat(4000)))
            .collect();
        assert!(validate_metadata(&big).is_err());
        assert!(validate_idempotency_key("retry-7f3a").is_ok());
        for bad in ["", "a b", "é", &"x".repeat(129)] {
            assert!(validate_idempotency_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn labels_and_env() {
        assert!(validate_labels(&labels(&[("team", "a"), ("x.io/y", "")])).is_ok());
        for bad in [
            labels(&[("", "a")]),
            labels(&[("a b", "a")]),
            labels(&[("a", "x\u{0}y")]),
            labels(&[("a", "x=y")]),
        ] {
            assert!(validate_labels(&bad).is_err(), "{bad:?}");
        }
        assert!(validate_env(&labels(&[("PATH", "/bin")])).is_ok());
        for bad in [
            labels(&[("1A", "")]),
            labels(&[("A-B", "")]),
            labels(&[("A", "\u{0}")]),
        ] {
            assert!(validate_env(&bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_label_selector(" a=1, b = 2 ,").unwrap(),
            vec![("a".into(), "1".into()), ("b".into(), "2".into())]
        );
        assert!(parse_label_selector("a").is_err());
    }

    #[test]
    fn resources_take_defaults_and_maximums() {
        let d = Resources {
            cpu_millis: 1000,
            memory_mib: 512,
            disk_mib: 2048,
            max_pids: 1024,
        };
        let m = Resources {
            cpu_millis: 4000,
            memory_mib: 4096,
            disk_mib: 8192,
            max_pids: 4096,
        };
        let mut n = NewSandbox {
            memory_mib: 256,
            ..Default::default()
        };
        resolve_resources(&mut n, d, m).unwrap();
        assert_eq!(
            (n.cpu_millis, n.memory_mib, n.disk_mib, n.max_pids),
            (1000, 256, 2048, 1024)
        );
        for bad in [
            NewSandbox {
                cpu_millis: -1,
                ..Default::default()
            },
            NewSandbox {
                cpu_millis: 4001,
                ..Default::default()
            },
            NewSandbox {
                memory_mib: 8,
                ..Default::default()
            },
        ] {
            let mut b = bad.clone();
            assert!(resolve_resources(&mut b, d, m).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_request_hash_tells_requests_apart_but_not_their_keys() {
        let a = NewSandbox {
            image: "host".into(),
            labels: labels(&[("a", "1"), ("b", "2")]),
            ..Default::default()
        };
        let mut b = a.clone();
        b.idempotency_key = Some("k".into());
        assert_eq!(
            request_hash(&a),
            request_hash(&b),
            "the key is not the request"
        );
        for change in [
            |n: &mut NewSandbox| n.image = "other".into(),
            |n: &mut NewSandbox| n.memory_mib = 1,
            |n: &mut NewSandbox| {
                n.labels.insert("c".into(), "3".into());
            },
            |n: &mut NewSandbox| n.restart_policy = Some(super::super::RestartPolicy::Never),
            |n: &mut NewSandbox| n.auto_resume = true,
        ] {
            let mut c = a.clone();
            change(&mut c);
            assert_ne!(request_hash(&a), request_hash(&c), "{c:?}");
        }
    }
}
