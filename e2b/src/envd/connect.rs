//! The Connect protocol as E2B's SDKs speak it to envd: JSON only, no
//! compression. Unary calls are a JSON body each way, errors an HTTP status
//! with `{"code": "not_found", "message": …}`. Streams are 5-byte envelopes
//! (flags, big-endian length) of JSON, and a server stream ends with an
//! envelope flagged 0x02 that carries `{}` or `{"error": …}` (its HTTP
//! status is 200 whatever happens). Messages go through prost-reflect, so
//! the JSON is ProtoJSON: camelCase out, either spelling in.

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::{Buf, Bytes, BytesMut};
use futures::{Stream, StreamExt};
use http::{HeaderValue, StatusCode};
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, SerializeOptions};
use std::sync::OnceLock;
use tonic::Code;

/// The most one envelope (one message) may hold.
pub const MAX_MESSAGE: usize = 4 << 20;
const END_STREAM: u8 = 0x02;
const COMPRESSED: u8 = 0x01;

fn pool() -> &'static DescriptorPool {
    static POOL: OnceLock<DescriptorPool> = OnceLock::new();
    POOL.get_or_init(|| {
        DescriptorPool::decode(crate::envd::pb::DESCRIPTOR)
            .expect("envd's descriptor set is built in")
    })
}

/// A Connect error: a gRPC code and a message.
#[derive(Debug, Clone)]
pub struct ConnectError {
    pub code: Code,
    pub message: String,
}

impl ConnectError {
    pub fn new(code: Code, message: impl Into<String>) -> ConnectError {
        ConnectError {
            code,
            message: message.into(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> ConnectError {
        ConnectError::new(Code::InvalidArgument, message)
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({"code": code_name(self.code), "message": self.message})
    }
}

impl From<tonic::Status> for ConnectError {
    /// A sandbox that is not running reads as E2B's proxy says it: "was
    /// not found", which the SDKs turn into their not-running error.
    fn from(s: tonic::Status) -> ConnectError {
        if s.code() == Code::FailedPrecondition && s.message().contains(", not running") {
            return ConnectError::new(
                Code::Unavailable,
                format!("The sandbox was not found: {}", s.message()),
            );
        }
        ConnectError::new(s.code(), s.message())
    }
}

/// Connect's name of a code.
pub fn code_name(c: Code) -> &'static str {
    match c {
        Code::Ok => "ok",
        Code::Cancelled => "canceled",
        Code::Unknown => "unknown",
        Code::InvalidArgument => "invalid_argument",
        Code::DeadlineExceeded => "deadline_exceeded",
        Code::NotFound => "not_found",
        Code::AlreadyExists => "already_exists",
        Code::PermissionDenied => "permission_denied",
        Code::ResourceExhausted => "resource_exhausted",
        Code::FailedPrecondition => "failed_precondition",
        Code::Aborted => "aborted",
        Code::OutOfRange => "out_of_range",
        Code::Unimplemented => "unimplemented",
        Code::Internal => "internal",
        Code::Unavailable => "unavailable",
        Code::DataLoss => "data_loss",
        Code::Unauthenticated => "unauthenticated",
    }
}

/// The HTTP status of a unary error, as the Connect spec maps it.
pub fn http_status(c: Code) -> StatusCode {
    let n = match c {
        Code::Ok => 200,
        Code::Cancelled => 499,
        Code::InvalidArgument | Code::FailedPrecondition | Code::OutOfRange => 400,
        Code::DeadlineExceeded => 504,
        Code::NotFound => 404,
        Code::AlreadyExists | Code::Aborted => 409,
        Code::PermissionDenied => 403,
        Code::ResourceExhausted => 429,
        Code::Unimplemented => 501,
        Code::Unavailable => 503,
        Code::Unauthenticated => 401,
        Code::Unknown | Code::Internal | Code::DataLoss => 500,
    };
    StatusCode::from_u16(n).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl IntoResponse for ConnectError {
    fn into_response(self) -> Response {
        talon_core::listen::trace::failed(http_status(self.code), &self.message);
        (http_status(self.code), axum::Json(self.json())).into_response()
    }
}

/// A message type of envd's protos, by its full name.
pub trait Named: prost::Message + Default {
    const NAME: &'static str;
}

/// Implements `Named` for generated types: `named! { T => "pkg.T", … }`.
macro_rules! named {
    ($($t:ty => $n:literal),* $(,)?) => {
        $(impl $crate::envd::connect::Named for $t { const NAME: &'static str = $n; })*
    };
}
pub(crate) use named;

/// Reads one message from JSON (an empty body is the empty message).
pub fn from_json<T: Named>(body: &[u8]) -> Result<T, ConnectError> {
    let desc = pool()
        .get_message_by_name(T::NAME)
        .expect("every Named type is in the descriptor set");
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    let mut de = serde_json::Deserializer::from_slice(body);
    let dm = DynamicMessage::deserialize_with_options(
        desc,
        &mut de,
        &DeserializeOptions::new().deny_unknown_fields(false),
    )
    .map_err(|e| ConnectError::invalid(format!("{}: {e}", T::NAME)))?;
    T::decode(prost::Message::encode_to_vec(&dm).as_slice())
        .map_err(|e| ConnectError::new(Code::Internal, format!("{}: {e}", T::NAME)))
}

/// Writes one message as ProtoJSON.
pub fn to_json<T: Named>(msg: &T) -> Vec<u8> {
    let desc = pool()
        .get_message_by_name(T::NAME)
        .expect("every Named type is in the descriptor set");
    let dm = DynamicMessage::decode(desc, msg.encode_to_vec().as_slice())
        .expect("a message re-reads as itself");
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::new(&mut out);
    dm.serialize_with_options(&mut ser, &SerializeOptions::new())
        .expect("ProtoJSON of a valid message");
    out
}

/// A unary answer.
pub fn unary<T: Named>(msg: &T) -> Response {
    let mut r = Response::new(Body::from(to_json(msg)));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn envelope(flags: u8, json: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(5 + json.len());
    b.extend_from_slice(&[flags]);
    b.extend_from_slice(&(json.len() as u32).to_be_bytes());
    b.extend_from_slice(json);
    b.freeze()
}

/// A server stream's answer: each message in an envelope, then the
/// end-of-stream envelope with the error, if the stream ended in one.
pub fn server_stream<T, S>(messages: S) -> Response
where
    T: Named + Send + 'static,
    S: Stream<Item = Result<T, ConnectError>> + Send + 'static,
{
    let body = async_stream(messages);
    let mut r = Response::new(Body::from_stream(body));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/connect+json"),
    );
    r
}

fn async_stream<T, S>(messages: S) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send
where
    T: Named + Send + 'static,
    S: Stream<Item = Result<T, ConnectError>> + Send + 'static,
{
    futures::stream::unfold(Some(Box::pin(messages)), |state| async move {
        let mut messages = state?;
        Some(match messages.next().await {
            Some(Ok(m)) => (Ok(envelope(0, &to_json(&m))), Some(messages)),
            Some(Err(e)) => {
                let end = serde_json::json!({"error": e.json()}).to_string();
                (Ok(envelope(END_STREAM, end.as_bytes())), None)
            }
            None => (Ok(envelope(END_STREAM, b"{}")), None),
        })
    })
}

/// A client stream's (or a server stream's early error's) single answer
/// in streaming form: the message, if any, then the end of the stream.
pub fn stream_result<T: Named>(r: Result<T, ConnectError>) -> Response {
    let mut body = BytesMut::new();
    match r {
        Ok(m) => {
            body.extend_from_slice(&envelope(0, &to_json(&m)));
            body.extend_from_slice(&envelope(END_STREAM, b"{}"));
        }
        Err(e) => {
            let end = serde_json::json!({"error": e.json()}).to_string();
            body.extend_from_slice(&envelope(END_STREAM, end.as_bytes()));
        }
    }
    let mut r = Response::new(Body::from(body.freeze()));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/connect+json"),
    );
    r
}

/// Reads enveloped messages as they arrive.
pub struct Envelopes {
    body: futures::stream::BoxStream<'static, Result<Bytes, axum::Error>>,
    buf: BytesMut,
    done: bool,
}

impl Envelopes {
    pub fn new(body: Body) -> Envelopes {
        Envelopes {
            body: body.into_data_stream().boxed(),
            buf: BytesMut::new(),
            done: false,
        }
    }

    /// The next message's JSON; None at the end of the body.
    pub async fn next(&mut self) -> Result<Option<Bytes>, ConnectError> {
        loop {
            if self.buf.len() >= 5 {
                let flags = self.buf[0];
                let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]])
                    as usize;
                if len > MAX_MESSAGE {
                    return Err(ConnectError::new(
                        Code::ResourceExhausted,
                        format!("a message of {len} bytes is over the {MAX_MESSAGE} byte limit"),
                    ));
                }
                if flags & COMPRESSED != 0 {
                    return Err(ConnectError::new(
                        Code::Unimplemented,
                        "compressed messages are not accepted",
                    ));
                }
                if self.buf.len() >= 5 + len {
                    self.buf.advance(5);
                    let msg = self.buf.split_to(len).freeze();
                    if flags & END_STREAM != 0 {
                        self.done = true;
                        return Ok(None);
                    }
                    return Ok(Some(msg));
                }
            }
            if self.done {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(ConnectError::invalid("the request ends inside a message"))
                };
            }
            match self.body.next().await {
                Some(Ok(chunk)) => self.buf.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    return Err(ConnectError::new(
                        Code::Cancelled,
                        format!("reading the request: {e}"),
                    ));
                }
                None => self.done = true,
            }
        }
    }

    /// The one message of a server stream's request.
    pub async fn single<T: Named>(&mut self) -> Result<T, ConnectError> {
        let m = self
            .next()
            .await?
            .ok_or_else(|| ConnectError::invalid("the request has no message"))?;
        from_json(&m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envd::pb::process;

    #[test]
    fn proto_json_both_ways() {
        let r: process::StartRequest = from_json(
            br#"{"process":{"cmd":"/bin/bash","args":["-l","-c","echo hi"],"envs":{"A":"1"}},"stdin":false,"unknownField":1}"#,
        )
        .unwrap();
        let p = r.process.as_ref().unwrap();
        assert_eq!(p.args, ["-l", "-c", "echo hi"]);
        assert_eq!(r.stdin, Some(false));
        // snake_case in is fine too.
        let s: process::SendInputRequest =
            from_json(br#"{"process":{"pid":7},"input":{"stdin":"aGk="}}"#).unwrap();
        assert_eq!(
            s.input.unwrap().input,
            Some(process::process_input::Input::Stdin(b"hi".to_vec()))
        );
        let ev = process::StartResponse {
            event: Some(process::ProcessEvent {
                event: Some(process::process_event::Event::End(
                    process::process_event::EndEvent {
                        exit_code: -1,
                        exited: true,
                        status: "exit status 255".into(),
                        error: None,
                    },
                )),
            }),
        };
        let j: serde_json::Value = serde_json::from_slice(&to_json(&ev)).unwrap();
        assert_eq!(
            j,
            serde_json::json!({"event":{"end":{"exitCode":-1,"exited":true,"status":"exit status 255"}}})
        );
        assert!(from_json::<process::StartRequest>(b"[1]").is_err());
    }

    #[tokio::test]
    async fn envelopes_split_anywhere() {
        let mut wire = Vec::new();
        wire.extend_from_slice(&envelope(0, br#"{"a":1}"#));
        wire.extend_from_slice(&envelope(0, b"{}"));
        wire.extend_from_slice(&envelope(END_STREAM, b"{}"));
        let chunks: Vec<Result<Bytes, std::io::Error>> = wire
            .chunks(3)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        let mut e = Envelopes::new(Body::from_stream(futures::stream::iter(chunks)));
        assert_eq!(e.next().await.unwrap().unwrap(), &br#"{"a":1}"#[..]);
        assert_eq!(e.next().await.unwrap().unwrap(), &b"{}"[..]);
        assert!(e.next().await.unwrap().is_none());
        // A truncated message is an error, not a silent end.
        let mut e = Envelopes::new(Body::from(envelope(0, b"{}").slice(..4)));
        assert!(e.next().await.is_err());
    }

    #[test]
    fn statuses() {
        assert_eq!(http_status(Code::NotFound), StatusCode::NOT_FOUND);
        assert_eq!(http_status(Code::Unauthenticated).as_u16(), 401);
        assert_eq!(code_name(Code::AlreadyExists), "already_exists");
    }
}
