//! Spellings the REST surface accepts besides the canonical proto3 JSON,
//! rewritten into it before decoding (one place, applied to every body):
//!
//! - an enum value by its short name, any case, `-` or `_`: `"allowlist"`
//!   for `EGRESS_MODE_ALLOWLIST`;
//! - the seed's older policy name `restricted-egress` (= `allowlist`);
//! - a `NetworkPolicy` given as just its mode: `"network_policy": "sealed"`;
//! - `network` for `network_policy`, the seed's short form.
//!
//! Responses always use the canonical names.

use prost_reflect::{EnumDescriptor, Kind, MessageDescriptor};
use serde_json::Value;

/// Legacy enum spellings: (enum, alias, canonical value).
const ENUM_ALIASES: &[(&str, &str, &str)] = &[(
    "talon.v1.EgressMode",
    "restricted-egress",
    "EGRESS_MODE_ALLOWLIST",
)];

/// Field aliases: (alias, field). The alias applies in every message with
/// that field, and only when the field itself is absent.
const FIELD_ALIASES: &[(&str, &str)] = &[("network", "network_policy")];

/// Messages that may be given as a bare string, naming the enum field the
/// string sets.
const BARE_STRING: &[(&str, &str)] = &[("talon.v1.NetworkPolicy", "mode")];

fn enum_value(e: &EnumDescriptor, s: &str) -> Option<String> {
    if e.get_value_by_name(s).is_some() {
        return None;
    }
    if let Some((_, _, v)) = ENUM_ALIASES
        .iter()
        .find(|(en, a, _)| *en == e.full_name() && a.eq_ignore_ascii_case(s))
    {
        return Some(v.to_string());
    }
    // The shared prefix of the values, from the zero value's name.
    let zero = e.values().find(|v| v.number() == 0)?;
    let prefix = zero.name().strip_suffix("UNSPECIFIED")?;
    let wanted = format!("{prefix}{}", s.to_ascii_uppercase().replace('-', "_"));
    e.get_value_by_name(&wanted).map(|v| v.name().to_string())
}

/// Rewrites `v` (a JSON body for `desc`) in place.
pub fn apply(desc: &MessageDescriptor, v: &mut Value) {
    if let Value::String(s) = v
        && let Some((_, field)) = BARE_STRING.iter().find(|(n, _)| *n == desc.full_name())
    {
        *v = serde_json::json!({ *field: s.clone() });
    }
    let Value::Object(obj) = v else { return };
    for (alias, field) in FIELD_ALIASES {
        if desc.get_field_by_name(field).is_some()
            && !obj.contains_key(*field)
            && desc.get_field_by_json_name(alias).is_none()
            && let Some(x) = obj.remove(*alias)
        {
            obj.insert(field.to_string(), x);
        }
    }
    for (key, x) in obj.iter_mut() {
        let Some(f) = desc
            .get_field_by_name(key)
            .or_else(|| desc.get_field_by_json_name(key))
        else {
            continue;
        };
        match f.kind() {
            Kind::Enum(e) => match x {
                Value::String(s) => {
                    if let Some(c) = enum_value(&e, s) {
                        *s = c;
                    }
                }
                Value::Array(items) => {
                    for i in items {
                        if let Value::String(s) = i
                            && let Some(c) = enum_value(&e, s)
                        {
                            *s = c;
                        }
                    }
                }
                _ => {}
            },
            Kind::Message(m) => match x {
                Value::Array(items) => items.iter_mut().for_each(|i| apply(&m, i)),
                Value::Object(_) if f.is_map() => {
                    if let Some(vf) = m.get_field_by_name("value")
                        && let Kind::Message(vm) = vf.kind()
                        && let Value::Object(entries) = x
                    {
                        entries.values_mut().for_each(|i| apply(&vm, i));
                    }
                }
                _ => apply(&m, x),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> MessageDescriptor {
        let pool = prost_reflect::DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap();
        pool.get_message_by_name("talon.v1.Sandbox").unwrap()
    }

    #[test]
    fn the_seed_spellings_become_canonical() {
        for (body, mode) in [
            (
                serde_json::json!({"network_policy": {"mode": "allowlist"}}),
                "EGRESS_MODE_ALLOWLIST",
            ),
            (
                serde_json::json!({"networkPolicy": {"mode": "Sealed"}}),
                "EGRESS_MODE_SEALED",
            ),
            (
                serde_json::json!({"network_policy": "restricted-egress"}),
                "EGRESS_MODE_ALLOWLIST",
            ),
            (serde_json::json!({"network": "deny"}), "EGRESS_MODE_DENY"),
            (
                serde_json::json!({"network": {"mode": "open"}}),
                "EGRESS_MODE_OPEN",
            ),
            (
                serde_json::json!({"network_policy": {"mode": "EGRESS_MODE_OPEN"}}),
                "EGRESS_MODE_OPEN",
            ),
        ] {
            let mut v = body.clone();
            apply(&sandbox(), &mut v);
            let policy = v
                .get("network_policy")
                .or_else(|| v.get("networkPolicy"))
                .unwrap();
            assert_eq!(policy["mode"], mode, "{body}");
        }
    }

    #[test]
    fn a_policy_body_may_be_its_mode() {
        let pool = prost_reflect::DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap();
        let policy = pool.get_message_by_name("talon.v1.NetworkPolicy").unwrap();
        let mut v = serde_json::json!("restricted-egress");
        apply(&policy, &mut v);
        assert_eq!(v, serde_json::json!({"mode": "EGRESS_MODE_ALLOWLIST"}));
    }

    #[test]
    fn unknown_spellings_are_left_for_the_decoder_to_refuse() {
        let mut v = serde_json::json!({"network_policy": {"mode": "wide-open"}});
        apply(&sandbox(), &mut v);
        assert_eq!(v["network_policy"]["mode"], "wide-open");
    }
}
