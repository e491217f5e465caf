//! A route's request made into its first message (body, path and
//! query bound as the rule says), and unary calls answered as JSON.

use super::*;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use codec::DynCodec;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use routes::{BodyRule, Route};
use serde_json::{Map, Value};
use tonic::Status;
use tonic::metadata::MetadataMap;
use tonic::transport::Channel;

pub(crate) fn is_json(parts: &http::request::Parts) -> bool {
    parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_none_or(|t| t.starts_with("application/json") || t.contains("ndjson"))
}

pub(crate) async fn read_body(gw: &Gateway, body: Body) -> Result<Bytes, Status> {
    axum::body::to_bytes(body, gw.config.max_json_bytes)
        .await
        .map_err(|e| {
            if talon_core::listen::body::too_slow(&e) {
                return crate::error::broken_body(&e);
            }
            crate::error::too_large(format!(
                "the request body is over the gateway's limit of {} bytes of JSON (--http-max-json-bytes); send large data as application/octet-stream",
                gw.config.max_json_bytes
            ))
        })
}

/// Path variables and query parameters as a JSON object for `desc`.
pub(crate) fn bindings(
    desc: &MessageDescriptor,
    vars: &[(String, String)],
    query: Option<&str>,
    header_fallback: bool,
) -> Result<Map<String, Value>, Status> {
    let mut obj = Map::new();
    transcode::bind_query(desc, &mut obj, query, header_fallback)?;
    // Path variables win over anything else that names the same field.
    for (field, raw) in vars {
        transcode::bind(desc, &mut obj, field, &transcode::decode(raw)?)?;
    }
    Ok(obj)
}

/// Merges `over` into `base`, objects recursively.
pub(crate) fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Object(b)), Value::Object(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The request of a unary or server-streaming call.
pub(crate) async fn first_message(
    gw: &Gateway,
    route: &Route,
    vars: &[(String, String)],
    parts: &http::request::Parts,
    body: Body,
) -> Result<DynamicMessage, Status> {
    let desc = route.method.input();
    let mut obj = Map::new();
    if route.body != BodyRule::None {
        let raw = read_body(gw, body).await?;
        let v: Value = if raw.is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_slice(&raw)
                .map_err(|e| Status::invalid_argument(format!("request body is not JSON: {e}")))?
        };
        match (&route.body, v) {
            (BodyRule::All, Value::Object(o)) => obj = o,
            (BodyRule::All, _) => {
                return Err(Status::invalid_argument(
                    "the request body must be a JSON object",
                ));
            }
            (BodyRule::Field(_), Value::Null) => {
                // JSON's null would read as "unset": an empty object
                // where the caller sent none of one.
                return Err(Status::invalid_argument(
                    "the request body must not be null (send {} for an empty one)",
                ));
            }
            (BodyRule::Field(f), v) => {
                let key = desc
                    .get_field_by_name(f)
                    .map(|fd| fd.json_name().to_string())
                    .unwrap_or_else(|| f.clone());
                obj.insert(key, v);
            }
            (BodyRule::None, _) => unreachable!(),
        }
    }
    let query = if route.body == BodyRule::All {
        None
    } else {
        parts.uri.query()
    };
    merge(&mut obj, bindings(&desc, vars, query, false)?);
    idempotency_header(&desc, &mut obj, &parts.headers)?;
    transcode::from_json(desc, Value::Object(obj))
}

/// The `Idempotency-Key` header, the HTTP convention for a safe retry,
/// fills a request's `idempotency_key` field; a body that names a
/// different key is refused rather than one of the two silently winning.
fn idempotency_header(
    desc: &MessageDescriptor,
    obj: &mut Map<String, Value>,
    headers: &http::HeaderMap,
) -> Result<(), Status> {
    let Some(h) = headers.get("idempotency-key") else {
        return Ok(());
    };
    let Some(f) = desc.get_field_by_name("idempotency_key") else {
        return Ok(());
    };
    let key = h
        .to_str()
        .map_err(|_| Status::invalid_argument("Idempotency-Key is not ASCII"))?;
    let name = f.json_name().to_string();
    let body = obj
        .get(&name)
        .or_else(|| obj.get(f.name()))
        .and_then(Value::as_str);
    match body {
        Some(b) if !b.is_empty() && b != key => Err(Status::invalid_argument(
            "the Idempotency-Key header and the body's idempotencyKey differ",
        )),
        _ => {
            obj.remove(f.name());
            obj.insert(name, Value::String(key.to_string()));
            Ok(())
        }
    }
}

pub(crate) async fn grpc(gw: &Gateway) -> Result<tonic::client::Grpc<Channel>, Status> {
    let mut g = tonic::client::Grpc::new(gw.channel.clone())
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20);
    g.ready()
        .await
        .map_err(|e| Status::unavailable(format!("control plane: {e}")))?;
    Ok(g)
}

pub(crate) fn json_response(
    status: http::StatusCode,
    v: &Value,
    md: &MetadataMap,
) -> Result<Response, Status> {
    let mut r = (status, axum::Json(v)).into_response();
    copy_metadata(md, r.headers_mut());
    Ok(r)
}

pub(crate) async fn unary(
    gw: &Gateway,
    route: &Route,
    parts: &http::request::Parts,
    msg: DynamicMessage,
) -> Result<Response, Status> {
    let md = request_metadata(&parts.headers, None);
    let codec = DynCodec {
        response: route.method.output(),
    };
    let resp = grpc(gw)
        .await?
        .unary(with_metadata(msg, &md), grpc_path(route), codec)
        .await?;
    let (md, msg, _) = resp.into_parts();
    message_response(route, &md, &msg)
}

/// A single response message as JSON; a session route's answer also sets
/// or clears the session cookie (see `session`).
pub(crate) fn message_response(
    route: &Route,
    md: &MetadataMap,
    msg: &DynamicMessage,
) -> Result<Response, Status> {
    let mut body = transcode::json_or_status(msg)?;
    let cookie = session::on_response(route.method.full_name(), &mut body);
    let mut r = json_response(http::StatusCode::OK, &body, md)?;
    if let Some(c) = cookie {
        r.headers_mut().insert(http::header::SET_COOKIE, c);
        r.headers_mut().insert(
            http::header::CACHE_CONTROL,
            http::HeaderValue::from_static("no-store"),
        );
    }
    Ok(r)
}
