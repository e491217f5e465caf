//! E2B's code interpreter (`E2b-Sandbox-Port: 49999`) onto Talon's
//! CodeService, so `e2b_code_interpreter`'s `run_code` and its contexts
//! work unmodified: `POST /execute` answers NDJSON events (`stdout`,
//! `stderr`, `result` with one key per format, `error`,
//! `number_of_executions`), `/contexts` creates, lists, restarts and
//! deletes contexts. The credential is the sandbox's access token, as
//! `X-Access-Token` or `E2B-Traffic-Access-Token` (the code interpreter
//! SDK sends the latter on its context calls).

use super::{Ctx, plain};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};
use talon_proto::v1 as pb;
use talon_proto::v1::code_service_client::CodeServiceClient;
use tonic::Code;

/// The port the code interpreter listens on in an E2B sandbox.
pub const CODE_PORT: u16 = 49999;
/// The most a request body may hold (code is at most 1 MiB).
const MAX_BODY: usize = 2 << 20;
/// Where E2B's contexts start when no cwd is given.
const DEFAULT_CWD: &str = "/home/user";

fn client(ctx: &Ctx) -> CodeServiceClient<tonic::transport::Channel> {
    CodeServiceClient::new(ctx.channel()).max_decoding_message_size(64 << 20)
}

/// A gRPC status as the code interpreter's server answers: its text, with
/// the HTTP status the SDK maps (404 NotFoundException, 502 timeout).
fn failed(ctx: &Ctx, s: tonic::Status) -> Response {
    if s.code() == Code::NotFound && s.message().contains("sandbox") {
        return super::sandbox_not_found(&ctx.e2b_id);
    }
    let status = crate::error::status_of(s.code());
    (status, s.message().to_string()).into_response()
}

fn language(name: Option<&str>) -> Result<pb::CodeLanguage, String> {
    match name.map(str::to_ascii_lowercase).as_deref() {
        None | Some("") | Some("python") => Ok(pb::CodeLanguage::Python),
        Some("javascript") | Some("js") => Ok(pb::CodeLanguage::Javascript),
        Some("bash") => Ok(pb::CodeLanguage::Bash),
        Some(other) => Err(format!(
            "language {other:?} is not served here: python, javascript or bash"
        )),
    }
}

fn language_name(l: i32) -> &'static str {
    match pb::CodeLanguage::try_from(l) {
        Ok(pb::CodeLanguage::Javascript) => "javascript",
        Ok(pb::CodeLanguage::Bash) => "bash",
        _ => "python",
    }
}

fn context_json(c: &pb::CodeContext) -> Value {
    json!({"id": c.context_id, "language": language_name(c.language), "cwd": c.cwd})
}

/// A rich result in E2B's shape: a key per format it knows, the rest
/// under `extra`.
fn result_json(r: &pb::CodeResult) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("type".into(), json!("result"));
    let mut extra = serde_json::Map::new();
    for (mime, v) in &r.data {
        let key = match mime.as_str() {
            "text/plain" => "text",
            "text/html" => "html",
            "text/markdown" => "markdown",
            "image/svg+xml" => "svg",
            "image/png" => "png",
            "image/jpeg" => "jpeg",
            "application/pdf" => "pdf",
            "text/latex" => "latex",
            "application/javascript" => "javascript",
            "application/json" => {
                let parsed = serde_json::from_str(v).unwrap_or(Value::String(v.clone()));
                out.insert("json".into(), parsed);
                continue;
            }
            other => {
                extra.insert(other.to_string(), json!(v));
                continue;
            }
        };
        out.insert(key.into(), json!(v.trim_end_matches('\n')));
    }
    if !extra.is_empty() {
        out.insert("extra".into(), Value::Object(extra));
    }
    out.insert("is_main_result".into(), json!(r.is_main_result));
    Value::Object(out)
}

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

/// One event of a run as an NDJSON line.
fn event_line(e: pb::run_code_response::Event) -> Option<Value> {
    use pb::run_code_response::Event;
    Some(match e {
        Event::Stdout(o) => json!({"type": "stdout", "text": o.text, "timestamp": now_ns()}),
        Event::Stderr(o) => json!({"type": "stderr", "text": o.text, "timestamp": now_ns()}),
        Event::Result(r) => result_json(&r),
        Event::CodeError(e) => json!({
            "type": "error", "name": e.name, "value": e.value,
            "traceback": e.traceback.join("\n"),
        }),
        Event::Completed(c) => {
            json!({"type": "number_of_executions", "execution_count": c.execution_count})
        }
    })
}

async fn body_json(body: Body) -> Result<Value, Response> {
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| plain(StatusCode::PAYLOAD_TOO_LARGE, "the request is too large"))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        plain(
            StatusCode::BAD_REQUEST,
            format!("the body is not JSON: {e}"),
        )
    })
}

pub async fn call(ctx: Ctx, method: Method, path: &str, body: Body) -> Response {
    if ctx.token.is_empty() {
        let no = plain(
            StatusCode::UNAUTHORIZED,
            "the code interpreter needs the sandbox's access token (X-Access-Token)",
        );
        return super::refuse(body, no).await;
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (method, segs.as_slice()) {
        (Method::GET, ["health"]) => StatusCode::OK.into_response(),
        (Method::POST, ["execute"]) => execute(ctx, body).await,
        (Method::POST, ["contexts"]) => create(ctx, body).await,
        (Method::GET, ["contexts"]) => list(ctx).await,
        (Method::DELETE, ["contexts", id]) => {
            let r = client(&ctx)
                .delete_code_context(rq(
                    &ctx,
                    pb::DeleteCodeContextRequest {
                        sandbox_id: ctx.sandbox_id.clone(),
                        context_id: id.to_string(),
                    },
                ))
                .await;
            unary(&ctx, r, |_| StatusCode::NO_CONTENT.into_response())
        }
        (Method::POST, ["contexts", id, "restart"]) => {
            let r = client(&ctx)
                .restart_code_context(rq(
                    &ctx,
                    pb::RestartCodeContextRequest {
                        sandbox_id: ctx.sandbox_id.clone(),
                        context_id: id.to_string(),
                    },
                ))
                .await;
            unary(&ctx, r, |_| StatusCode::NO_CONTENT.into_response())
        }
        (Method::POST, ["contexts", id, "interrupt"]) => {
            let r = client(&ctx)
                .interrupt_code_context(rq(
                    &ctx,
                    pb::InterruptCodeContextRequest {
                        sandbox_id: ctx.sandbox_id.clone(),
                        context_id: id.to_string(),
                    },
                ))
                .await;
            unary(&ctx, r, |_| StatusCode::NO_CONTENT.into_response())
        }
        _ => {
            let no = plain(
                StatusCode::NOT_FOUND,
                format!("{path} is not a code interpreter route"),
            );
            super::refuse(body, no).await
        }
    }
}

/// A gRPC request with the sandbox's token as its bearer (a token that is
/// no header value goes without, and the server refuses it).
fn rq<T>(ctx: &Ctx, msg: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    if let Some(v) = crate::credential::bearer(&ctx.token) {
        r.metadata_mut().insert("authorization", v);
    }
    r
}

fn unary<T>(
    ctx: &Ctx,
    r: Result<tonic::Response<T>, tonic::Status>,
    ok: impl FnOnce(T) -> Response,
) -> Response {
    match r {
        Ok(r) => ok(r.into_inner()),
        Err(s) => failed(ctx, s),
    }
}

async fn create(ctx: Ctx, body: Body) -> Response {
    let b = match body_json(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let lang = match language(b["language"].as_str()) {
        Ok(l) => l,
        Err(m) => return plain(StatusCode::BAD_REQUEST, m),
    };
    let cwd = b["cwd"].as_str().unwrap_or(DEFAULT_CWD).to_string();
    let mut c = client(&ctx);
    let mut r = c
        .create_code_context(rq(
            &ctx,
            pb::CreateCodeContextRequest {
                sandbox_id: ctx.sandbox_id.clone(),
                language: lang as i32,
                cwd: cwd.clone(),
                env: Default::default(),
            },
        ))
        .await;
    // An image without E2B's user has no /home/user: its workspace then.
    if b["cwd"].is_null()
        && matches!(&r, Err(s) if s.code() == Code::InvalidArgument && s.message().contains("cwd"))
    {
        r = c
            .create_code_context(rq(
                &ctx,
                pb::CreateCodeContextRequest {
                    sandbox_id: ctx.sandbox_id.clone(),
                    language: lang as i32,
                    ..Default::default()
                },
            ))
            .await;
    }
    unary(&ctx, r, |r| {
        let c = r.context.unwrap_or_default();
        (StatusCode::OK, axum::Json(context_json(&c))).into_response()
    })
}

async fn list(ctx: Ctx) -> Response {
    let r = client(&ctx)
        .list_code_contexts(rq(
            &ctx,
            pb::ListCodeContextsRequest {
                sandbox_id: ctx.sandbox_id.clone(),
            },
        ))
        .await;
    unary(&ctx, r, |r| {
        let v: Vec<Value> = r.contexts.iter().map(context_json).collect();
        axum::Json(Value::Array(v)).into_response()
    })
}

async fn execute(ctx: Ctx, body: Body) -> Response {
    let b = match body_json(body).await {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(code) = b["code"].as_str() else {
        return plain(StatusCode::BAD_REQUEST, "code is required");
    };
    // `envs` of run_code: this run's own variables.
    let env = match &b["env_vars"] {
        Value::Null => Default::default(),
        Value::Object(m) => {
            let mut env = std::collections::HashMap::new();
            for (k, v) in m {
                let Some(v) = v.as_str() else {
                    return plain(
                        StatusCode::BAD_REQUEST,
                        format!("env_vars: the value of {k} is not a string"),
                    );
                };
                env.insert(k.clone(), v.to_string());
            }
            env
        }
        _ => return plain(StatusCode::BAD_REQUEST, "env_vars must be an object"),
    };
    let context_id = b["context_id"].as_str().unwrap_or_default().to_string();
    let lang = if context_id.is_empty() {
        match language(b["language"].as_str()) {
            Ok(l) => l as i32,
            Err(m) => return plain(StatusCode::BAD_REQUEST, m),
        }
    } else {
        0
    };
    let r = client(&ctx)
        .run_code(rq(
            &ctx,
            pb::RunCodeRequest {
                sandbox_id: ctx.sandbox_id.clone(),
                context_id,
                language: lang,
                code: code.to_string(),
                env,
                timeout: ctx.timeout.map(|d| prost_types::Duration {
                    seconds: d.as_secs() as i64,
                    nanos: d.subsec_nanos() as i32,
                }),
            },
        ))
        .await;
    let mut stream = match r {
        Ok(s) => s.into_inner(),
        Err(s) => return failed(&ctx, s),
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(64);
    tokio::spawn(async move {
        loop {
            let line = match stream.message().await {
                Ok(Some(m)) => match m.event.and_then(event_line) {
                    Some(v) => v,
                    None => continue,
                },
                Ok(None) => break,
                Err(s) => json!({"type": "error", "name": "TalonError",
                                 "value": s.message(), "traceback": ""}),
            };
            let mut text = line.to_string();
            text.push('\n');
            if tx.send(Ok(Bytes::from(text))).await.is_err() {
                // The caller went: dropping the stream cancels the run.
                break;
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "application/x-ndjson")
        .body(Body::from_stream(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        ))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_take_e2b_format_keys() {
        let r = pb::CodeResult {
            data: [
                ("text/plain".to_string(), "42\n".to_string()),
                ("image/png".to_string(), "iVBOR".to_string()),
                ("application/json".to_string(), "{\"a\":1}".to_string()),
                ("application/x-custom".to_string(), "x".to_string()),
            ]
            .into(),
            is_main_result: true,
        };
        let v = result_json(&r);
        assert_eq!(v["type"], "result");
        assert_eq!(v["text"], "42");
        assert_eq!(v["png"], "iVBOR");
        assert_eq!(v["json"]["a"], 1);
        assert_eq!(v["extra"]["application/x-custom"], "x");
        assert_eq!(v["is_main_result"], true);
    }

    #[test]
    fn languages_fail_closed() {
        assert_eq!(language(None), Ok(pb::CodeLanguage::Python));
        assert_eq!(
            language(Some("JavaScript")),
            Ok(pb::CodeLanguage::Javascript)
        );
        assert!(language(Some("typescript")).is_err());
        assert!(language(Some("r")).is_err());
    }
}
