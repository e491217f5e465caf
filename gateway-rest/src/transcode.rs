//! JSON ⇄ protobuf by the canonical proto3 mapping (prost-reflect's), and
//! the binding of path variables and query parameters to request fields:
//! both field names (`page_size`) and JSON names (`pageSize`) are
//! accepted; responses use JSON names, 64-bit integers as strings, enums
//! as names, and carry every field, default values included.

use prost_reflect::{
    DeserializeOptions, DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, SerializeOptions,
};
use serde_json::{Map, Value};
use tonic::{Code, Status};

pub fn to_json(m: &DynamicMessage) -> Result<Value, serde_json::Error> {
    let opts = SerializeOptions::new().skip_default_fields(false);
    m.serialize_with_options(serde_json::value::Serializer, &opts)
}

pub fn from_json(desc: MessageDescriptor, mut v: Value) -> Result<DynamicMessage, Status> {
    crate::aliases::apply(&desc, &mut v);
    let opts = DeserializeOptions::new().deny_unknown_fields(true);
    DynamicMessage::deserialize_with_options(desc, v, &opts)
        .map_err(|e| Status::invalid_argument(format!("request body: {e}")))
}

fn field_named(desc: &MessageDescriptor, name: &str) -> Option<FieldDescriptor> {
    desc.get_field_by_name(name)
        .or_else(|| desc.get_field_by_json_name(name))
}

/// A query or path value as the JSON the canonical mapping accepts.
fn scalar(f: &FieldDescriptor, raw: &str) -> Result<Value, Status> {
    let bad = || {
        Status::invalid_argument(format!(
            "{} {raw:?} is not a valid {:?}",
            f.name(),
            f.kind()
        ))
    };
    Ok(match f.kind() {
        Kind::Bool => match raw {
            "true" | "1" => Value::Bool(true),
            "false" | "0" | "" => Value::Bool(false),
            _ => return Err(bad()),
        },
        Kind::Message(m) if !m.full_name().starts_with("google.protobuf.") => {
            return Err(Status::invalid_argument(format!(
                "{} is a message and can't be given in the URL",
                f.name()
            )));
        }
        // Numbers, enums, strings, bytes (base64) and well-known types
        // are all accepted as JSON strings.
        _ => Value::String(raw.to_string()),
    })
}

/// Sets `path` (dot-separated field names) to `raw` in the JSON object
/// that will become a message of type `desc`. Repeated fields collect.
pub fn bind(
    desc: &MessageDescriptor,
    obj: &mut Map<String, Value>,
    path: &str,
    raw: &str,
) -> Result<(), Status> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let f = field_named(desc, head)
        .ok_or_else(|| Status::invalid_argument(format!("unknown parameter {path:?}")))?;
    let key = f.json_name().to_string();
    match rest {
        // A map's key is the rest of the name, dots and all.
        Some(rest) if f.is_map() => {
            let entry = obj.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(sub) = entry else {
                return Err(Status::invalid_argument(format!("{head} is given twice")));
            };
            if sub
                .insert(rest.to_string(), Value::String(raw.to_string()))
                .is_some()
            {
                return Err(Status::invalid_argument(format!("{path} is given twice")));
            }
            Ok(())
        }
        Some(rest) => {
            let Kind::Message(inner) = f.kind() else {
                return Err(Status::invalid_argument(format!(
                    "{head} has no field {rest:?}"
                )));
            };
            let entry = obj.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(sub) = entry else {
                return Err(Status::invalid_argument(format!("{head} is given twice")));
            };
            bind(&inner, sub, rest, raw)
        }
        None => {
            let v = scalar(&f, raw)?;
            if f.is_list() {
                let entry = obj.entry(key).or_insert_with(|| Value::Array(vec![]));
                if let Value::Array(a) = entry {
                    a.push(v);
                }
            } else {
                obj.insert(key, v);
            }
            Ok(())
        }
    }
}

/// Percent-decodes a path segment or query component.
pub fn decode(raw: &str) -> Result<String, Status> {
    percent_encoding::percent_decode_str(&raw.replace('+', " "))
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| Status::invalid_argument("a URL parameter is not UTF-8"))
}

/// Binds every query parameter. For raw uploads, a name that is not a
/// field of the request falls back to its `header` message.
pub fn bind_query(
    desc: &MessageDescriptor,
    obj: &mut Map<String, Value>,
    query: Option<&str>,
    header_fallback: bool,
) -> Result<(), Status> {
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (decode(k)?, decode(v)?);
        // OpenAPI's deepObject style, `name[key]`, is `name.key` here.
        let k = match k.split_once('[') {
            Some((name, rest)) if rest.ends_with(']') => {
                format!("{name}.{}", &rest[..rest.len() - 1])
            }
            _ => k,
        };
        let head = k.split('.').next().unwrap_or("");
        if header_fallback && field_named(desc, head).is_none() {
            bind(desc, obj, &format!("header.{k}"), &v)?;
        } else {
            bind(desc, obj, &k, &v)?;
        }
    }
    Ok(())
}

/// The request message's bytes field that carries raw data (`data`, or
/// `input` for a PTY), and whether a `header` message precedes it.
pub fn raw_field(desc: &MessageDescriptor) -> Option<(FieldDescriptor, bool)> {
    let f = desc.fields().find(|f| {
        f.kind() == Kind::Bytes && !f.is_list() && matches!(f.name(), "data" | "input")
    })?;
    let header = desc
        .get_field_by_name("header")
        .is_some_and(|h| h.containing_oneof().is_some());
    Some((f, header))
}

/// The closing message of an upload, `finish: {size}`, when the request
/// has one (WriteFile): the gateway sends it once a body has arrived
/// whole, so a body that breaks off never looks complete downstream.
pub fn finish_message(desc: &MessageDescriptor, size: u64) -> Option<DynamicMessage> {
    let f = desc.get_field_by_name("finish")?;
    let Kind::Message(fm) = f.kind() else {
        return None;
    };
    let size_field = fm.get_field_by_name("size")?;
    let mut inner = DynamicMessage::new(fm);
    inner.set_field(&size_field, prost_reflect::Value::I64(size as i64));
    let mut m = DynamicMessage::new(desc.clone());
    m.set_field(&f, prost_reflect::Value::Message(inner));
    Some(m)
}

/// The bytes a message carries in its raw field.
pub fn raw_len(m: &DynamicMessage, raw: &FieldDescriptor) -> u64 {
    match m.get_field(raw).as_ref() {
        prost_reflect::Value::Bytes(b) if m.has_field(raw) => b.len() as u64,
        _ => 0,
    }
}

/// The JSON of a message, or an INTERNAL status.
pub fn json_or_status(m: &DynamicMessage) -> Result<Value, Status> {
    to_json(m).map_err(|e| Status::new(Code::Internal, format!("response to JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_reflect::DescriptorPool;

    fn pool() -> DescriptorPool {
        DescriptorPool::decode(talon_proto::FILE_DESCRIPTOR_SET).unwrap()
    }

    #[test]
    fn parameters_bind_by_either_name_and_nest() {
        let p = pool();
        let d = p
            .get_message_by_name("talon.v1.ConnectProcessRequest")
            .unwrap();
        let mut o = Map::new();
        bind(&d, &mut o, "sandbox_id", "sbx_1").unwrap();
        bind(&d, &mut o, "process.pid", "42").unwrap();
        bind(&d, &mut o, "afterSeq", "7").unwrap();
        let m = from_json(d.clone(), Value::Object(o)).unwrap();
        let j = to_json(&m).unwrap();
        assert_eq!(j["sandboxId"], "sbx_1");
        assert_eq!(j["process"]["pid"], 42);
        assert_eq!(j["afterSeq"], "7");
        let mut o = Map::new();
        assert_eq!(
            bind(&d, &mut o, "nope", "1").unwrap_err().code(),
            Code::InvalidArgument
        );
        // A map field takes `name.key=value`, the key with its dots.
        let l = p
            .get_message_by_name("talon.v1.ListSandboxesRequest")
            .unwrap();
        let mut o = Map::new();
        bind_query(
            &l,
            &mut o,
            Some("metadata.user=ann&metadata.run.id=r%201"),
            false,
        )
        .unwrap();
        let j = to_json(&from_json(l.clone(), Value::Object(o)).unwrap()).unwrap();
        assert_eq!(j["metadata"]["user"], "ann");
        assert_eq!(j["metadata"]["run.id"], "r 1");
        let mut o = Map::new();
        assert!(bind_query(&l, &mut o, Some("metadata.a=1&metadata.a=2"), false).is_err());
        let l = p
            .get_message_by_name("talon.v1.ListSandboxesRequest")
            .unwrap();
        let mut o = Map::new();
        bind_query(&l, &mut o, Some("page_size=2&pageToken=o2"), false).unwrap();
        let m = from_json(l, Value::Object(o)).unwrap();
        assert_eq!(to_json(&m).unwrap()["pageSize"], 2);
    }

    #[test]
    fn raw_fields_are_found() {
        let p = pool();
        let w = p.get_message_by_name("talon.v1.WriteFileRequest").unwrap();
        assert_eq!(
            raw_field(&w).map(|(f, h)| (f.name().to_string(), h)),
            Some(("data".into(), true))
        );
        let i = p
            .get_message_by_name("talon.v1.SendProcessInputRequest")
            .unwrap();
        assert_eq!(
            raw_field(&i).map(|(f, h)| (f.name().to_string(), h)),
            Some(("data".into(), false))
        );
        let a = p.get_message_by_name("talon.v1.AttachRequest").unwrap();
        assert_eq!(raw_field(&a).unwrap().0.name(), "input");
        let c = p
            .get_message_by_name("talon.v1.CreateSandboxRequest")
            .unwrap();
        assert!(raw_field(&c).is_none());
    }
}
