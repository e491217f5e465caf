//! envd's plain-HTTP routes: `GET /health`, and `/files` to download
//! (gzip when asked) and upload (multipart with one or more files, or a
//! raw octet-stream body, gzip-encoded or not), onto ReadFile and
//! WriteFile. `/files` takes the sandbox's token or an E2B signature
//! (`signature`, `signature_expiration`), which the server checks.

use super::{Ctx, plain};
use crate::error::status_of;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use http::{HeaderMap, HeaderValue, StatusCode};
use std::collections::HashMap;
use std::io::Write;
use talon_core::e2b_files::{DEFAULT_USER, Presented, resolve, signed_user};
use talon_proto::v1 as pb;
use talon_proto::v1::filesystem_service_client::FilesystemServiceClient;
use tonic::Code;

/// The most one upload message carries (bigger body chunks are split).
const CHUNK: usize = 256 << 10;

fn client(ctx: &Ctx) -> FilesystemServiceClient<tonic::transport::Channel> {
    FilesystemServiceClient::new(ctx.channel())
        .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES)
        .max_encoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES)
}

fn from_status(s: &tonic::Status) -> Response {
    let status = match s.code() {
        // envd answers 400 for a directory, 401 for an unknown user.
        Code::FailedPrecondition => StatusCode::BAD_REQUEST,
        c => status_of(c),
    };
    plain(status, s.message())
}

/// `GET /health`: 204 while the sandbox runs, E2B's 502 once it is gone.
pub async fn health(ctx: Ctx) -> Response {
    let r = client(&ctx)
        .stat(
            match ctx.req(pb::StatRequest {
                sandbox_id: ctx.sandbox_id.clone(),
                path: "/".into(),
                user: String::new(),
            }) {
                Ok(r) => r,
                Err(e) => return e.into_response(),
            },
        )
        .await;
    match r {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(s) if matches!(s.code(), Code::NotFound | Code::FailedPrecondition) => {
            super::sandbox_not_found(&ctx.e2b_id)
        }
        Err(s) => from_status(&s),
    }
}

/// The credential of a `/files` call, as the metadata to send: the
/// token as bearer, or the signature (checked by the server) for the path
/// as signed.
type Credential = (
    &'static str,
    tonic::metadata::MetadataValue<tonic::metadata::Ascii>,
);

fn credential(
    ctx: &Ctx,
    q: &HashMap<String, String>,
    signed_path: &str,
) -> Result<Credential, Response> {
    if let Some(sig) = q.get("signature") {
        let expiration = match q.get("signature_expiration") {
            None => None,
            Some(e) => Some(
                e.parse::<u64>()
                    .map_err(|_| plain(StatusCode::BAD_REQUEST, "invalid signature_expiration"))?,
            ),
        };
        let p = Presented {
            signature: sig.clone(),
            expiration,
            path: signed_path.to_string(),
            user: q.get("username").cloned().unwrap_or_default(),
        };
        let v = p
            .encode()
            .parse()
            .map_err(|_| plain(StatusCode::BAD_REQUEST, "invalid signature"))?;
        return Ok((talon_core::wire::FILE_TOKEN_HEADER, v));
    }
    if ctx.token.is_empty() {
        return Err(plain(
            StatusCode::UNAUTHORIZED,
            "missing X-Access-Token or signature",
        ));
    }
    let v = crate::credential::bearer(&ctx.token)
        .ok_or_else(|| plain(StatusCode::UNAUTHORIZED, "invalid X-Access-Token"))?;
    Ok(("authorization", v))
}

fn with<T>(msg: T, (k, v): Credential) -> tonic::Request<T> {
    let mut r = tonic::Request::new(msg);
    r.metadata_mut().insert(k, v);
    r
}

/// Whether a `/files` query carries a signature.
pub fn signed(raw: Option<&str>) -> bool {
    raw.is_some_and(|r| query(r).contains_key("signature"))
}

fn query(raw: &str) -> HashMap<String, String> {
    form_urlencoded::parse(raw.as_bytes())
        .into_owned()
        .collect()
}

/// The user of a `/files` call: a signed one's is the user it signed
/// (`username`, else E2B's default), whatever else it presents; an
/// unsigned one's is `username`, else the call's.
fn user_of(call_user: &str, q: &HashMap<String, String>) -> String {
    if q.contains_key("signature") {
        let username = q.get("username").map_or("", String::as_str);
        return signed_user(username).to_string();
    }
    q.get("username")
        .filter(|u| !u.is_empty())
        .cloned()
        .unwrap_or_else(|| {
            if call_user.is_empty() {
                DEFAULT_USER.into()
            } else {
                call_user.to_string()
            }
        })
}

/// `GET /files?path=…`: the file's bytes, gzip when the client accepts
/// it. The first chunk is read before answering, so a missing file is a
/// 404 and not a broken 200.
pub async fn download(ctx: Ctx, headers: HeaderMap, raw: String) -> Response {
    let q = query(&raw);
    let Some(path) = q.get("path").filter(|p| !p.is_empty()) else {
        return plain(StatusCode::BAD_REQUEST, "path is required");
    };
    let user = user_of(&ctx.user, &q);
    let msg = pb::ReadFileRequest {
        sandbox_id: ctx.sandbox_id.clone(),
        path: resolve(path, q.get("username").map_or("", String::as_str)),
        offset: 0,
        length: 0,
        user,
    };
    let r = match credential(&ctx, &q, path) {
        Ok(c) => with(msg, c),
        Err(resp) => return resp,
    };
    let mut s = match client(&ctx).read_file(r).await {
        Ok(s) => s.into_inner(),
        Err(st) => return from_status(&st),
    };
    let first = match s.message().await {
        Ok(m) => m.map(|m| Bytes::from(m.data)).unwrap_or_default(),
        Err(st) => return from_status(&st),
    };
    let rest = s.map(|r| {
        r.map(|m| Bytes::from(m.data))
            .map_err(|st| std::io::Error::other(st.message().to_string()))
    });
    let all = futures::stream::iter([Ok(first)]).chain(rest);
    let gzip = headers
        .get(http::header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    let mut resp = if gzip {
        Response::new(Body::from_stream(gzipped(all)))
    } else {
        Response::new(Body::from_stream(all))
    };
    let h = resp.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    if gzip {
        h.insert(
            http::header::CONTENT_ENCODING,
            HeaderValue::from_static("gzip"),
        );
    }
    resp
}

/// Compresses a byte stream as it flows.
fn gzipped(
    s: impl Stream<Item = std::io::Result<Bytes>> + Send + 'static,
) -> impl Stream<Item = std::io::Result<Bytes>> + Send + 'static {
    use flate2::write::GzEncoder;
    let enc = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    futures::stream::unfold((Box::pin(s), Some(enc)), |(mut s, enc)| async move {
        let mut enc = enc?;
        match s.next().await {
            Some(Ok(chunk)) => {
                let out = enc
                    .write_all(&chunk)
                    .map(|_| Bytes::from(std::mem::take(enc.get_mut())));
                Some((out, (s, Some(enc))))
            }
            Some(Err(e)) => Some((Err(e), (s, None))),
            None => Some((enc.finish().map(Bytes::from), (s, None))),
        }
    })
}

/// One file's write: header, data, finish. A body that fails stops the
/// stream before its finish, so nothing is written.
async fn write_one(
    mut c: FilesystemServiceClient<tonic::transport::Channel>,
    sandbox_id: String,
    cred: Credential,
    path: String,
    user: String,
    mut data: futures::stream::BoxStream<'static, Result<Bytes, String>>,
) -> Result<serde_json::Value, Response> {
    use pb::write_file_request::Message;
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::WriteFileRequest>(4);
    let msg = move |m: Message| pb::WriteFileRequest {
        sandbox_id: sandbox_id.clone(),
        message: Some(m),
    };
    let header = msg(Message::Header(pb::WriteFileHeader {
        path: path.clone(),
        mode: 0,
        create_parents: true,
        no_overwrite: false,
        user,
    }));
    let pump = async move {
        if tx.send(header).await.is_err() {
            return Ok(());
        }
        let mut size = 0i64;
        while let Some(item) = data.next().await {
            let b = item?;
            for i in (0..b.len()).step_by(CHUNK) {
                let part = b.slice(i..(i + CHUNK).min(b.len()));
                size += part.len() as i64;
                if tx.send(msg(Message::Data(part.to_vec()))).await.is_err() {
                    return Ok(());
                }
            }
        }
        let _ = tx
            .send(msg(Message::Finish(pb::WriteFileFinish { size })))
            .await;
        Ok::<(), String>(())
    };
    let rx = tokio_stream::wrappers::ReceiverStream::new(rx);
    let call = c.write_file(with(rx, cred));
    tokio::pin!(pump, call);
    let bad_body = |why: String| plain(StatusCode::BAD_REQUEST, why);
    let out = tokio::select! {
        pumped = &mut pump => {
            pumped.map_err(bad_body)?;
            call.await
        }
        // Answered before the body was all read: refused on the header (a
        // forged signature or token), answered at once with the rest of
        // the body unread; or done, when the finish has just gone.
        out = &mut call => {
            if out.is_ok() {
                (&mut pump).await.map_err(bad_body)?;
            }
            out
        }
    };
    let info = out
        .map_err(|s| from_status(&s))?
        .into_inner()
        .info
        .unwrap_or_default();
    Ok(serde_json::json!({
        "path": if info.path.is_empty() { path } else { info.path },
        "name": info.name,
        "type": "file",
    }))
}

/// `POST /files`: multipart (`file` parts, each named by its filename,
/// or by `path` when there is one part) or `application/octet-stream`
/// with `path`. Answers the files written.
pub async fn upload(ctx: Ctx, headers: HeaderMap, raw: String, body: Body) -> Response {
    let q = query(&raw);
    let user = user_of(&ctx.user, &q);
    let signed_user = q.get("username").map_or("", String::as_str).to_string();
    let ctype = headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let gzip = headers
        .get(http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == "gzip");
    if ctype.starts_with("multipart/form-data") {
        return multipart(ctx, q, ctype, user, signed_user, body).await;
    }
    if !ctype.is_empty() && !ctype.starts_with("application/octet-stream") {
        return plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send multipart/form-data or application/octet-stream",
        );
    }
    let Some(path) = q.get("path").filter(|p| !p.is_empty()).cloned() else {
        return plain(StatusCode::BAD_REQUEST, "path is required");
    };
    let data = body
        .into_data_stream()
        .map(|r| r.map_err(|e| format!("upload: {e}")));
    let data: futures::stream::BoxStream<'static, Result<Bytes, String>> = if gzip {
        gunzipped(data).boxed()
    } else {
        data.boxed()
    };
    let target = resolve(&path, &signed_user);
    let cred = match credential(&ctx, &q, &path) {
        Ok(c) => c,
        Err(resp) => return resp,
    };
    match write_one(
        client(&ctx),
        ctx.sandbox_id.clone(),
        cred,
        target,
        user,
        data,
    )
    .await
    {
        Ok(v) => axum::Json(serde_json::json!([v])).into_response(),
        Err(resp) => resp,
    }
}

/// Decompresses a gzip body as it flows.
fn gunzipped(
    s: impl Stream<Item = Result<Bytes, String>> + Send + 'static,
) -> impl Stream<Item = Result<Bytes, String>> + Send + 'static {
    use flate2::write::GzDecoder;
    let bad = |e: std::io::Error| format!("gzip body: {e}");
    futures::stream::unfold(
        (Box::pin(s), Some(GzDecoder::new(Vec::new()))),
        move |(mut s, dec)| async move {
            let mut dec = dec?;
            match s.next().await {
                Some(Ok(chunk)) => {
                    let out = dec
                        .write_all(&chunk)
                        .map(|_| Bytes::from(std::mem::take(dec.get_mut())))
                        .map_err(bad);
                    let next = out.is_ok().then_some(dec);
                    Some((out, (s, next)))
                }
                Some(Err(e)) => Some((Err(e), (s, None))),
                None => Some((dec.finish().map(Bytes::from).map_err(bad), (s, None))),
            }
        },
    )
}

async fn multipart(
    ctx: Ctx,
    q: HashMap<String, String>,
    ctype: String,
    user: String,
    signed_user: String,
    body: Body,
) -> Response {
    let Ok(boundary) = multer::parse_boundary(&ctype) else {
        return plain(StatusCode::BAD_REQUEST, "multipart body without a boundary");
    };
    let mut m: multer::Multipart<'static> =
        multer::Multipart::new(body.into_data_stream(), boundary);
    let mut written = Vec::new();
    let single_path = q.get("path").filter(|p| !p.is_empty()).cloned();
    loop {
        let field = match m.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return plain(StatusCode::BAD_REQUEST, format!("multipart: {e}")),
        };
        if field.name() != Some("file") {
            continue;
        }
        let named = field.file_name().map(str::to_string);
        let Some(path) = single_path.clone().or(named).filter(|p| !p.is_empty()) else {
            return plain(StatusCode::BAD_REQUEST, "a file part without a path");
        };
        // Each part streams to its file before the next is read.
        let target = resolve(&path, &signed_user);
        let cred = match credential(&ctx, &q, &path) {
            Ok(c) => c,
            Err(resp) => return resp,
        };
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, String>>(4);
        let write = write_one(
            client(&ctx),
            ctx.sandbox_id.clone(),
            cred,
            target,
            user.clone(),
            tokio_stream::wrappers::ReceiverStream::new(rx).boxed(),
        );
        let mut field = field;
        let feed = async move {
            loop {
                let item = match field.chunk().await {
                    Ok(Some(b)) => Ok(b),
                    Ok(None) => return,
                    Err(e) => Err(format!("multipart: {e}")),
                };
                let stop = item.is_err();
                if tx.send(item).await.is_err() || stop {
                    return;
                }
            }
        };
        // Both halves run as tasks of their own: the writer ends when the
        // part does, and neither outlives this request.
        let feeding = tokio::spawn(feed);
        let res = tokio::spawn(write).await;
        feeding.abort();
        match res {
            Ok(Ok(v)) => written.push(v),
            Ok(Err(resp)) => return resp,
            Err(e) => return plain(StatusCode::INTERNAL_SERVER_ERROR, format!("upload: {e}")),
        }
    }
    if written.is_empty() {
        return plain(StatusCode::BAD_REQUEST, "no file part in the upload");
    }
    axum::Json(serde_json::Value::Array(written)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A signed request acts as the user it signed, whatever Basic auth
    /// says: one without `username` signed E2B's default user, and was
    /// refused when the call's Basic auth named root.
    #[test]
    fn a_signed_request_is_its_signed_users() {
        let signed = q(&[("path", "a"), ("signature", "v1_x")]);
        assert_eq!(user_of("root", &signed), "user");
        assert_eq!(user_of("", &signed), "user");
        let signed_root = q(&[("signature", "v1_x"), ("username", "root")]);
        assert_eq!(user_of("alice", &signed_root), "root");
        // Unsigned: `username`, else the call's, else the default.
        assert_eq!(user_of("root", &q(&[])), "root");
        assert_eq!(user_of("", &q(&[])), "user");
        assert_eq!(user_of("root", &q(&[("username", "bob")])), "bob");
    }
}
