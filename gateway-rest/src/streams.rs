//! Streams over HTTP: server streams framed as NDJSON, SSE or raw bytes,
//! and client streams fed from a JSON sequence (one message at a time)
//! or a raw body cut into chunks.

use super::*;
use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use codec::DynCodec;
use futures::StreamExt;
use prost_reflect::{
    DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage, Value as PValue,
};
use routes::Route;
use serde_json::{Map, Value};
use tonic::Status;

/// How a server stream is framed for this client.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Framing {
    Ndjson,
    Sse,
    Raw,
}

pub(crate) fn framing(parts: &http::request::Parts, output: &MessageDescriptor) -> Framing {
    let accept = parts
        .headers
        .get(http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("text/event-stream") {
        Framing::Sse
    } else if accept.contains("application/octet-stream")
        && output.get_field_by_name("data").is_some()
    {
        Framing::Raw
    } else {
        Framing::Ndjson
    }
}

pub(crate) fn frame(
    pool: &DescriptorPool,
    f: Framing,
    item: Result<DynamicMessage, Status>,
) -> Bytes {
    match (f, item) {
        (Framing::Raw, Ok(m)) => match m.get_field_by_name("data").as_deref() {
            Some(PValue::Bytes(b)) => b.clone(),
            _ => Bytes::new(),
        },
        (Framing::Raw, Err(_)) => Bytes::new(),
        (f, item) => {
            let (event, v) = match item.and_then(|m| transcode::json_or_status(&m)) {
                Ok(v) => ("", v),
                Err(s) => (
                    "error",
                    serde_json::json!({ "error": error::body(pool, &s) }),
                ),
            };
            let line = serde_json::to_string(&v).unwrap_or_default();
            Bytes::from(if f == Framing::Sse {
                if event.is_empty() {
                    format!("data: {line}\n\n")
                } else {
                    format!("event: {event}\ndata: {line}\n\n")
                }
            } else {
                format!("{line}\n")
            })
        }
    }
}

pub(crate) async fn server_stream(
    gw: &Gateway,
    route: &Route,
    parts: &http::request::Parts,
    msg: DynamicMessage,
) -> Result<Response, Status> {
    let md = request_metadata(&parts.headers, None);
    let output = route.method.output();
    let f = framing(parts, &output);
    let codec = DynCodec { response: output };
    let resp = grpc(gw)
        .await?
        .server_streaming(with_metadata(msg, &md), grpc_path(route), codec)
        .await?;
    let (md, mut stream, _) = resp.into_parts();
    // An error before any output is an HTTP error, not a 200 with an
    // error line; but a stream that is quiet at first (a watch) starts
    // anyway. (Streaming::message is cancel-safe: nothing is lost.)
    let first = match tokio::time::timeout(gw.config.first_message_wait, stream.message()).await {
        Ok(r) => r?,
        Err(_) => None,
    };
    let pool = gw.pool.clone();
    let head = futures::stream::iter(first.map(Ok));
    let rest = futures::stream::unfold(Some(stream), |s| async move {
        let mut s = s?;
        match s.message().await {
            Ok(Some(m)) => Some((Ok(m), Some(s))),
            Ok(None) => None,
            Err(e) => Some((Err(e), None)),
        }
    });
    let body = head
        .chain(rest)
        .map(move |item| Ok::<_, std::convert::Infallible>(frame(&pool, f, item)));
    let content_type = match f {
        Framing::Ndjson => "application/x-ndjson",
        Framing::Sse => "text/event-stream",
        Framing::Raw => "application/octet-stream",
    };
    let mut r = Response::new(Body::from_stream(body));
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    r.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    copy_metadata(&md, r.headers_mut());
    if f == Framing::Raw {
        // A sandbox's bytes as they are (a file, most often): a download,
        // never a page on the gateway's origin.
        confine::answer(
            confine::Confinement::Download,
            http::StatusCode::OK,
            r.headers_mut(),
        );
    }
    Ok(r)
}

/// The messages of a client stream: JSON (an object, an array, or NDJSON)
/// or a raw body after a first message from the path and query.
pub(crate) async fn client_stream(
    gw: &Gateway,
    route: &Route,
    vars: &[(String, String)],
    parts: &http::request::Parts,
    body: Body,
) -> Result<Response, Status> {
    let desc = route.method.input();
    let md = request_metadata(&parts.headers, None);
    let codec = DynCodec {
        response: route.method.output(),
    };
    let raw =
        if is_json(parts) {
            None
        } else {
            Some(transcode::raw_field(&desc).ok_or_else(|| {
                Status::invalid_argument("this call takes JSON (application/json)")
            })?)
        };
    let Some((data_field, has_header)) = raw else {
        let binds = bindings(&desc, vars, parts.uri.query(), false)?;
        let limits = (gw.config.max_json_bytes, gw.config.max_stream_messages);
        let (tx, rx) = tokio::sync::mpsc::channel::<DynamicMessage>(4);
        let (failed_tx, mut failed_rx) = tokio::sync::oneshot::channel::<Status>();
        let feeder = tokio::spawn(feed_json(body, desc, binds, limits, tx, failed_tx));
        let call = async {
            grpc(gw)
                .await?
                .client_streaming(
                    with_metadata(tokio_stream::wrappers::ReceiverStream::new(rx), &md),
                    grpc_path(route),
                    codec,
                )
                .await
        };
        // A body that turns out malformed fails the request (and its call
        // is dropped, so the server sees a cancel, never a clean end).
        let resp = tokio::select! {
            biased;
            Ok(st) = &mut failed_rx => return Err(st),
            r = call => r,
        };
        feeder.abort();
        if let Ok(st) = failed_rx.try_recv() {
            return Err(st);
        }
        let (md, msg, _) = resp?.into_parts();
        return json_response(http::StatusCode::OK, &transcode::json_or_status(&msg)?, &md);
    };

    // Raw: the path and query make the first message (with the header);
    // the body follows in `data` chunks. Without a header, each chunk
    // carries the bindings too (they name the process, say).
    let binds = bindings(&desc, vars, parts.uri.query(), has_header)?;
    let first = transcode::from_json(desc.clone(), Value::Object(binds))?;
    let chunk = gw.config.chunk_bytes;
    let (tx, rx) = tokio::sync::mpsc::channel::<DynamicMessage>(4);
    let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<Status>();
    let feeder = tokio::spawn(feed(
        body, first, data_field, has_header, chunk, tx, failed_tx,
    ));
    let call = async {
        grpc(gw)
            .await?
            .client_streaming(
                with_metadata(tokio_stream::wrappers::ReceiverStream::new(rx), &md),
                grpc_path(route),
                codec,
            )
            .await
    };
    // A body that breaks off must not become a short file: it gets no
    // finish message (the agent writes nothing without one), and the call
    // is answered at once.
    let resp = tokio::select! {
        r = call => r?,
        Ok(why) = failed_rx => return Err(why),
    };
    feeder.abort();
    let (md, msg, _) = resp.into_parts();
    message_response(route, &md, &msg)
}

/// Reads a JSON client stream's body (one object, an array, or NDJSON)
/// into the request stream one message at a time (see `jsonseq`): at most
/// `limits.0` bytes and `limits.1` messages. The path and query bind into
/// the first message (or make one, for an empty body); an upload gets its
/// finish message unless it brought one. A body that fails says so on
/// `failed`, and the stream is then held open until the call is dropped.
pub(crate) async fn feed_json(
    body: Body,
    desc: MessageDescriptor,
    binds: Map<String, Value>,
    limits: (usize, usize),
    tx: tokio::sync::mpsc::Sender<DynamicMessage>,
    failed: tokio::sync::oneshot::Sender<Status>,
) {
    let (max_bytes, max_messages) = limits;
    let raw = transcode::raw_field(&desc).map(|(f, _)| f);
    let fin = desc.get_field_by_name("finish");
    let mut binds = Some(binds);
    let (mut bytes, mut count, mut raw_size, mut has_finish) = (0usize, 0usize, 0u64, false);
    let mut split = jsonseq::Splitter::default();
    let mut stream = body.into_data_stream();
    let result: Result<(), Status> = async {
        loop {
            let chunk = match stream.next().await {
                Some(Ok(c)) => c,
                Some(Err(e)) => return Err(crate::error::broken_body(&e)),
                None => break,
            };
            bytes += chunk.len();
            if bytes > max_bytes {
                return Err(crate::error::too_large(format!(
                    "request body: at most {max_bytes} bytes of JSON (send large data as application/octet-stream)"
                )));
            }
            let objects = split
                .push(&chunk)
                .map_err(|m| Status::invalid_argument(format!("request body: {}", m.0)))?;
            for obj in objects {
                count += 1;
                if count > max_messages {
                    return Err(Status::invalid_argument(format!(
                        "request body: at most {max_messages} messages in one request"
                    )));
                }
                let mut o: Map<String, Value> = serde_json::from_slice(&obj)
                    .map_err(|e| Status::invalid_argument(format!("request body: {e}")))?;
                if let Some(b) = binds.take() {
                    merge(&mut o, b);
                }
                let m = transcode::from_json(desc.clone(), Value::Object(o))?;
                if let Some(r) = &raw {
                    raw_size += transcode::raw_len(&m, r);
                }
                has_finish |= fin.as_ref().is_some_and(|f| m.has_field(f));
                if tx.send(m).await.is_err() {
                    return Ok(());
                }
            }
        }
        split
            .finish()
            .map_err(|m| Status::invalid_argument(format!("request body: {}", m.0)))?;
        if let Some(b) = binds.take() {
            let _ = tx
                .send(transcode::from_json(desc.clone(), Value::Object(b))?)
                .await;
        }
        // An upload given as JSON gets its finish too, unless it has one.
        if raw.is_some() && !has_finish
            && let Some(m) = transcode::finish_message(&desc, raw_size)
        {
            let _ = tx.send(m).await;
        }
        Ok(())
    }
    .await;
    if let Err(st) = result {
        let _ = failed.send(st);
        tx.closed().await;
    }
}

/// Reads a raw body into the request stream. With a header, the first
/// message goes alone; without one, it rides with the first chunk and
/// every chunk repeats its bindings. A whole body ends with the request's
/// finish message, when it has one; a body that fails says so on `failed`
/// and sends no finish.
pub(crate) async fn feed(
    body: Body,
    first: DynamicMessage,
    data_field: prost_reflect::FieldDescriptor,
    has_header: bool,
    chunk: usize,
    tx: tokio::sync::mpsc::Sender<DynamicMessage>,
    failed: tokio::sync::oneshot::Sender<Status>,
) {
    let mut body = body.into_data_stream();
    let template = if has_header {
        DynamicMessage::new(first.descriptor())
    } else {
        first.clone()
    };
    let mut pending = Some(first);
    if has_header
        && let Some(p) = pending.take()
        && tx.send(p).await.is_err()
    {
        return;
    }
    let mut buf = bytes::BytesMut::new();
    let mut ended = false;
    let mut total = 0u64;
    while !ended {
        match body.next().await {
            Some(Ok(b)) => {
                total += b.len() as u64;
                buf.extend_from_slice(&b);
            }
            Some(Err(e)) => {
                let _ = failed.send(crate::error::broken_body(&e));
                return;
            }
            None => ended = true,
        }
        while buf.len() >= chunk || (ended && (!buf.is_empty() || pending.is_some())) {
            let n = buf.len().min(chunk);
            let mut m = pending.take().unwrap_or_else(|| template.clone());
            m.set_field(&data_field, PValue::Bytes(buf.split_to(n).freeze()));
            if tx.send(m).await.is_err() {
                return;
            }
        }
    }
    // The body arrived whole: say so (uploads commit only on this).
    if let Some(fin) = transcode::finish_message(&template.descriptor(), total) {
        let _ = tx.send(fin).await;
    }
}
