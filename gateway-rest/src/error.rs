//! gRPC status to HTTP, by the standard table (google.rpc.Code's HTTP
//! mapping, as grpc-gateway uses), with a JSON body shaped like
//! google.rpc.Status: `{"code", "message", "details"}`. Details the
//! descriptor set knows are rendered as JSON with their `@type`.

use axum::response::{IntoResponse, Response};
use prost::Message;
use prost_reflect::DescriptorPool;
use tonic::{Code, Status};

pub fn http_status(code: Code) -> http::StatusCode {
    use http::StatusCode as S;
    match code {
        Code::Ok => S::OK,
        Code::Cancelled => S::from_u16(499).expect("499"),
        Code::Unknown | Code::Internal | Code::DataLoss => S::INTERNAL_SERVER_ERROR,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => S::BAD_REQUEST,
        Code::DeadlineExceeded => S::GATEWAY_TIMEOUT,
        Code::NotFound => S::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted => S::CONFLICT,
        Code::PermissionDenied => S::FORBIDDEN,
        Code::Unauthenticated => S::UNAUTHORIZED,
        Code::ResourceExhausted => S::TOO_MANY_REQUESTS,
        Code::Unimplemented => S::NOT_IMPLEMENTED,
        Code::Unavailable => S::SERVICE_UNAVAILABLE,
    }
}

use talon_core::rpc_status::RpcStatus;

fn detail_json(pool: &DescriptorPool, any: &prost_types::Any) -> serde_json::Value {
    let name = any.type_url.rsplit('/').next().unwrap_or_default();
    let known = pool.get_message_by_name(name).and_then(|d| {
        let m = prost_reflect::DynamicMessage::decode(d, any.value.as_slice()).ok()?;
        crate::transcode::to_json(&m).ok()
    });
    match known {
        Some(serde_json::Value::Object(mut o)) => {
            o.insert("@type".into(), any.type_url.clone().into());
            serde_json::Value::Object(o)
        }
        _ => {
            use base64::Engine;
            serde_json::json!({
                "@type": any.type_url,
                "value": base64::engine::general_purpose::STANDARD.encode(&any.value),
            })
        }
    }
}

/// The JSON body of an error.
pub fn body(pool: &DescriptorPool, s: &Status) -> serde_json::Value {
    let details: Vec<serde_json::Value> = RpcStatus::decode(s.details())
        .map(|d| d.details.iter().map(|a| detail_json(pool, a)).collect())
        .unwrap_or_default();
    serde_json::json!({
        "code": s.code() as i32,
        "message": s.message(),
        "details": details,
    })
}

/// An error response: status, JSON body, and the metadata that names
/// things (request id, sandbox id) as headers.
pub fn response(pool: &DescriptorPool, s: &Status) -> Response {
    let unread = s
        .metadata()
        .get(UNREAD_BODY)
        .and_then(|v| v.to_str().ok()?.parse::<u16>().ok())
        .and_then(|n| http::StatusCode::from_u16(n).ok());
    let status = unread.unwrap_or_else(|| http_status(s.code()));
    talon_core::listen::trace::failed(status, s.message());
    let mut r = (status, axum::Json(body(pool, s))).into_response();
    crate::copy_metadata(s.metadata(), r.headers_mut());
    if unread.is_some() {
        // The rest of the body was never read, so this connection ends
        // with the answer: say so, or the client may send its next
        // request on it while it closes (HTTP/1.1; HTTP/2 streams reset
        // on their own).
        r.headers_mut().insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
    }
    r
}

/// Marks a gateway-made refusal of a body it stopped reading, with the
/// HTTP status it gets: 413 for one over the limit (not the 400 of
/// INVALID_ARGUMENT, the code gRPC callers would see), 408 for one that
/// did not arrive in time.
const UNREAD_BODY: &str = "x-talon-unread-body";

fn unread(mut s: Status, http: &'static str) -> Status {
    s.metadata_mut().insert(
        UNREAD_BODY,
        tonic::metadata::MetadataValue::from_static(http),
    );
    s
}

/// A request body over the gateway's limit.
pub fn too_large(msg: impl Into<String>) -> Status {
    unread(Status::invalid_argument(msg), "413")
}

/// What a request body that failed while it was read is answered with:
/// 408 when it did not keep the minimum rate (`talon_core::listen::body`),
/// else it broke off.
pub fn broken_body(e: &(dyn std::error::Error + 'static)) -> Status {
    if talon_core::listen::body::too_slow(e) {
        unread(Status::deadline_exceeded(e.to_string()), "408")
    } else {
        Status::cancelled(format!("the request body broke off: {e}"))
    }
}

/// An error the gateway finds itself, before any call.
pub fn local(code: Code, msg: impl Into<String>) -> Status {
    Status::new(code, msg)
}
