//! Bidirectional streams (the PTY's `Attach`) over a WebSocket. Text
//! frames carry request messages as JSON (the first one opens, e.g.
//! `{"open": {...}}`); a binary frame is the raw input bytes. Responses
//! whose raw bytes field is set (`output`) go out as binary frames, the
//! rest as JSON text frames; an error is a last text frame
//! `{"error": {...}}` before the close (1011).
//!
//! Browsers can't set headers on a WebSocket, so the credential may also
//! come as a subprotocol `bearer.<token>` (echoed back as `talon.v1`);
//! never in the query string.

use crate::routes::Route;
use crate::{Gateway, codec::DynCodec, transcode};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use futures::{SinkExt, StreamExt};
use prost_reflect::{DynamicMessage, Kind, Value as PValue};
use serde_json::{Map, Value};
use std::sync::Arc;
use tonic::Status;

const PROTOCOL: &str = "talon.v1";

pub(crate) async fn bridge(
    gw: Arc<Gateway>,
    route: Route,
    vars: Vec<(String, String)>,
    parts: http::request::Parts,
    upgrade: WebSocketUpgrade,
) -> Response {
    let offered: Vec<String> = parts
        .headers
        .get_all(http::header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|p| p.trim().to_string())
        .collect();
    let bearer = offered
        .iter()
        .find_map(|p| p.strip_prefix("bearer."))
        .map(str::to_string);
    let md = crate::request_metadata(&parts.headers, bearer.as_deref());
    let desc = route.method.input();
    let binds = match crate::bindings(&desc, &vars, parts.uri.query(), false) {
        Ok(b) => b,
        Err(s) => return crate::error::response(&gw.pool, &s),
    };
    let upgrade = if offered.iter().any(|p| p == PROTOCOL) || bearer.is_some() {
        upgrade.protocols([PROTOCOL])
    } else {
        upgrade
    };
    let conn = talon_core::listen::RequestConn::of(&parts.extensions).cloned();
    upgrade.on_upgrade(move |socket| run(gw, route, md, binds, conn, socket))
}

fn error_text(gw: &Gateway, s: &Status) -> Message {
    let v = serde_json::json!({ "error": crate::error::body(&gw.pool, s) });
    Message::Text(v.to_string().into())
}

async fn run(
    gw: Arc<Gateway>,
    route: Route,
    md: tonic::metadata::MetadataMap,
    binds: Map<String, Value>,
    conn: Option<talon_core::listen::RequestConn>,
    socket: WebSocket,
) {
    let (mut out, mut inp) = socket.split();
    let desc = route.method.input();
    let raw_in = transcode::raw_field(&desc).map(|(f, _)| f);
    let output = route.method.output();
    let raw_out = output
        .fields()
        .find(|f| f.kind() == Kind::Bytes && matches!(f.name(), "output" | "data"));
    let (tx, rx) = tokio::sync::mpsc::channel::<DynamicMessage>(16);
    let (bad_tx, mut bad_rx) = tokio::sync::mpsc::channel::<Status>(1);
    // WebSocket → request stream.
    let reader = tokio::spawn(async move {
        let mut first = Some(binds);
        while let Some(Ok(frame)) = inp.next().await {
            let built = match frame {
                Message::Text(t) => match serde_json::from_str::<Value>(t.as_str()) {
                    Ok(Value::Object(mut o)) => {
                        if let Some(b) = first.take() {
                            crate::merge(&mut o, b);
                        }
                        transcode::from_json(desc.clone(), Value::Object(o))
                    }
                    _ => Err(Status::invalid_argument(
                        "a text frame must be a JSON object",
                    )),
                },
                Message::Binary(b) => match &raw_in {
                    Some(f) => {
                        let base = first.take().unwrap_or_default();
                        transcode::from_json(desc.clone(), Value::Object(base)).map(|mut m| {
                            m.set_field(f, PValue::Bytes(b));
                            m
                        })
                    }
                    None => Err(Status::invalid_argument(
                        "this stream takes no binary frames",
                    )),
                },
                Message::Close(_) => break,
                _ => continue,
            };
            match built {
                Ok(m) => {
                    if tx.send(m).await.is_err() {
                        break;
                    }
                }
                Err(s) => {
                    let _ = bad_tx.send(s).await;
                    break;
                }
            }
        }
    });
    let codec = DynCodec {
        response: output.clone(),
    };
    let call = async {
        crate::grpc(&gw)
            .await?
            .streaming(
                crate::with_metadata(tokio_stream::wrappers::ReceiverStream::new(rx), &md),
                crate::grpc_path(&route),
                codec,
            )
            .await
    };
    let close = |code: u16, why: &str| {
        Message::Close(Some(CloseFrame {
            code,
            reason: why.chars().take(100).collect::<String>().into(),
        }))
    };
    let mut stream = match call.await {
        // The server took the credential.
        Ok(r) => {
            if let Some(c) = &conn {
                c.authenticated();
            }
            r.into_inner()
        }
        Err(s) => {
            let _ = out.send(error_text(&gw, &s)).await;
            let _ = out.send(close(1011, s.message())).await;
            reader.abort();
            return;
        }
    };
    loop {
        tokio::select! {
            Some(s) = bad_rx.recv() => {
                let _ = out.send(error_text(&gw, &s)).await;
                let _ = out.send(close(1008, s.message())).await;
                break;
            }
            item = stream.message() => match item {
                Ok(Some(m)) => {
                    let frame = match raw_out.as_ref().filter(|f| m.has_field(f)) {
                        Some(f) => match m.get_field(f).as_ref() {
                            PValue::Bytes(b) => Message::Binary(b.clone()),
                            _ => continue,
                        },
                        None => match transcode::to_json(&m) {
                            Ok(v) => Message::Text(v.to_string().into()),
                            Err(_) => continue,
                        },
                    };
                    if out.send(frame).await.is_err() {
                        break;
                    }
                }
                Ok(None) => {
                    let _ = out.send(close(1000, "")).await;
                    break;
                }
                Err(s) => {
                    let _ = out.send(error_text(&gw, &s)).await;
                    let _ = out.send(close(1011, s.message())).await;
                    break;
                }
            }
        }
    }
    reader.abort();
}
