//! envd's `process.Process` onto `talon.v1.ProcessService`. The two were
//! shaped alike, so this is naming: a command is `cmd` + `args`, a
//! selector is a pid or a tag, events are start / data / end. What envd
//! adds is ordering (`start` first, `end` last) and keepalives, which
//! this module produces; a process outlives its request in both.

use super::connect::{self, ConnectError, Envelopes, Named, named};
use super::pb::process as e;
use super::{Ctx, unary_body};
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use std::pin::Pin;
use talon_proto::v1 as pb;
use talon_proto::v1::process_service_client::ProcessServiceClient;
use tonic::Code;

named! {
    e::ListRequest => "process.ListRequest",
    e::ListResponse => "process.ListResponse",
    e::StartRequest => "process.StartRequest",
    e::StartResponse => "process.StartResponse",
    e::ConnectRequest => "process.ConnectRequest",
    e::ConnectResponse => "process.ConnectResponse",
    e::UpdateRequest => "process.UpdateRequest",
    e::UpdateResponse => "process.UpdateResponse",
    e::StreamInputRequest => "process.StreamInputRequest",
    e::StreamInputResponse => "process.StreamInputResponse",
    e::SendInputRequest => "process.SendInputRequest",
    e::SendInputResponse => "process.SendInputResponse",
    e::SendSignalRequest => "process.SendSignalRequest",
    e::SendSignalResponse => "process.SendSignalResponse",
    e::CloseStdinRequest => "process.CloseStdinRequest",
    e::CloseStdinResponse => "process.CloseStdinResponse",
}

type Events = Pin<Box<dyn Stream<Item = Result<e::ProcessEvent, ConnectError>> + Send>>;

fn client(ctx: &Ctx) -> ProcessServiceClient<tonic::transport::Channel> {
    ProcessServiceClient::new(ctx.channel())
        .max_decoding_message_size(talon_core::wire::MAX_MESSAGE_BYTES)
}

/// One call of `process.Process/{method}`.
pub async fn call(ctx: Ctx, method: &str, stream: bool, body: Body) -> Response {
    let r = match (method, stream) {
        ("Start", true) => return start(ctx, body).await,
        ("Connect", true) => return connect_to(ctx, body).await,
        ("StreamInput", true) => return connect::stream_result(stream_input(&ctx, body).await),
        ("List", false) => list(&ctx, body).await,
        ("SendInput", false) => send_input(&ctx, body).await,
        ("SendSignal", false) => send_signal(&ctx, body).await,
        ("CloseStdin", false) => close_stdin(&ctx, body).await,
        ("Update", false) => update(&ctx, body).await,
        (m, _) => Err(ConnectError::new(
            Code::Unimplemented,
            format!("process.Process/{m} is not served in this form"),
        )),
    };
    r.unwrap_or_else(IntoResponse::into_response)
}

fn selector(s: Option<e::ProcessSelector>) -> Result<pb::ProcessSelector, ConnectError> {
    use e::process_selector::Selector as E;
    use pb::process_selector::Selector as T;
    let sel = match s.and_then(|s| s.selector) {
        Some(E::Pid(p)) => T::Pid(p),
        Some(E::Tag(t)) => T::Tag(t),
        None => return Err(ConnectError::invalid("process: a pid or a tag is required")),
    };
    Ok(pb::ProcessSelector {
        selector: Some(sel),
    })
}

fn pty_size(p: Option<e::Pty>) -> Option<pb::PtySize> {
    let s = p?.size?;
    Some(pb::PtySize {
        rows: s.rows,
        cols: s.cols,
    })
}

/// Output, the exit and keepalives as envd's events. `start` comes
/// first: from Talon's `started`, or made from `pid` when the stream
/// (a reconnect) does not open with one.
fn events(
    ctx: &Ctx,
    talon: impl Stream<Item = Result<pb::ProcessEvent, tonic::Status>> + Send + 'static,
    pid: Option<u32>,
    pty: bool,
) -> Events {
    use e::process_event::Event as Ev;
    let mut started = false;
    let talon = talon.filter_map(move |item| {
        let ev = match item {
            Err(s) => {
                return futures::future::ready(Some(futures::stream::iter(vec![Err(s.into())])));
            }
            Ok(pb::ProcessEvent { event: None }) => return futures::future::ready(None),
            Ok(pb::ProcessEvent { event: Some(ev) }) => ev,
        };
        let mut out = Vec::new();
        // `start` once, first: Talon's own, or made from `pid`.
        match (&ev, started) {
            (pb::process_event::Event::Started(_), true) => {
                return futures::future::ready(None);
            }
            (pb::process_event::Event::Started(_), false) => {}
            (_, false) => out.push(Ok(Ev::Start(e::process_event::StartEvent {
                pid: pid.unwrap_or_default(),
            }))),
            (_, true) => {}
        }
        started = true;
        out.push(match ev {
            pb::process_event::Event::Started(s) => {
                Ok(Ev::Start(e::process_event::StartEvent { pid: s.pid }))
            }
            pb::process_event::Event::Output(o) => {
                use e::process_event::data_event::Output;
                let data = if pty {
                    Output::Pty(o.data)
                } else if o.stream == pb::OutputStream::Stderr as i32 {
                    Output::Stderr(o.data)
                } else {
                    Output::Stdout(o.data)
                };
                Ok(Ev::Data(e::process_event::DataEvent { output: Some(data) }))
            }
            // envd's deadline ends the call, not the stream.
            pb::process_event::Event::Exited(x) if x.timed_out => Err(ConnectError::new(
                Code::DeadlineExceeded,
                "the command ran past its timeout and was killed",
            )),
            pb::process_event::Event::Exited(x) => Ok(Ev::End(end_of(&x))),
        });
        let out = Some(out);
        futures::future::ready(out.map(futures::stream::iter))
    });
    let talon = talon
        .flatten()
        .map(|r| r.map(|ev| e::ProcessEvent { event: Some(ev) }));
    with_keepalive(talon, ctx.keepalive, || e::ProcessEvent {
        event: Some(Ev::Keepalive(e::process_event::KeepAlive {})),
    })
}

/// envd's `end`: the exit code, or -1 and the signal as Go prints it.
fn end_of(x: &pb::ProcessExited) -> e::process_event::EndEvent {
    if x.signal != 0 {
        let name = match x.signal {
            9 => "killed".to_string(),
            15 => "terminated".to_string(),
            2 => "interrupt".to_string(),
            n => format!("signal {n}"),
        };
        e::process_event::EndEvent {
            exit_code: -1,
            exited: false,
            status: format!("signal: {name}"),
            error: None,
        }
    } else {
        e::process_event::EndEvent {
            exit_code: x.exit_code,
            exited: true,
            status: format!("exit status {}", x.exit_code),
            error: None,
        }
    }
}

/// Interleaves `make()` whenever `s` has been quiet for `every`; ends
/// with `s`.
pub fn with_keepalive<T, S, F>(
    s: S,
    every: Option<std::time::Duration>,
    make: F,
) -> Pin<Box<dyn Stream<Item = Result<T, ConnectError>> + Send>>
where
    T: Send + 'static,
    S: Stream<Item = Result<T, ConnectError>> + Send + 'static,
    F: Fn() -> T + Send + Sync + 'static,
{
    let Some(every) = every else {
        return Box::pin(s);
    };
    let s = Box::pin(s);
    Box::pin(futures::stream::unfold(
        (s, make),
        move |(mut s, make)| async move {
            tokio::select! {
                item = s.next() => item.map(|i| (i, (s, make))),
                _ = tokio::time::sleep(every) => {
                    let k = make();
                    Some((Ok(k), (s, make)))
                }
            }
        },
    ))
}

/// Ends `s` with DEADLINE_EXCEEDED once `t` has passed, as envd's handler
/// does when `Connect-Timeout-Ms` runs out.
pub fn with_deadline<T: Send + 'static>(
    s: Pin<Box<dyn Stream<Item = Result<T, ConnectError>> + Send>>,
    t: Option<std::time::Duration>,
) -> Pin<Box<dyn Stream<Item = Result<T, ConnectError>> + Send>> {
    let Some(t) = t else { return s };
    let sleep = Box::pin(tokio::time::sleep(t));
    Box::pin(futures::stream::unfold(
        Some((s, sleep)),
        |state| async move {
            let (mut s, mut sleep) = state?;
            tokio::select! {
                item = s.next() => item.map(|i| (i, Some((s, sleep)))),
                _ = &mut sleep => Some((
                    Err(ConnectError::new(Code::DeadlineExceeded, "the stream's timeout passed")),
                    None,
                )),
            }
        },
    ))
}

async fn start(ctx: Ctx, body: Body) -> Response {
    let r: Result<Events, ConnectError> = async {
        let req: e::StartRequest = Envelopes::new(body).single().await?;
        let p = req.process.unwrap_or_default();
        if p.cmd.is_empty() {
            return Err(ConnectError::invalid("process.cmd is required"));
        }
        let pty = pty_size(req.pty);
        let is_pty = pty.is_some();
        let mut command = vec![p.cmd];
        command.extend(p.args);
        let cwd = match p.cwd.filter(|c| !c.is_empty()) {
            Some(c) => ctx.path(&c),
            None => talon_core::e2b_files::home_of(&ctx.user),
        };
        let msg = pb::StartProcessRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            command,
            env: p.envs.into_iter().collect(),
            cwd,
            user: ctx.user.clone(),
            tag: req.tag.unwrap_or_default(),
            stdin: req.stdin.unwrap_or(true) || pty.is_some(),
            pty,
            timeout: ctx.timeout.map(|t| prost_types::Duration {
                seconds: t.as_secs() as i64,
                nanos: t.subsec_nanos() as i32,
            }),
        };
        let s = client(&ctx)
            .start_process(ctx.req(msg)?)
            .await?
            .into_inner();
        let s = s.map(|r| r.map(|m| m.event.unwrap_or_default()));
        Ok(events(&ctx, s, None, is_pty))
    }
    .await;
    respond(r, |ev| e::StartResponse { event: Some(ev) })
}

async fn connect_to(ctx: Ctx, body: Body) -> Response {
    let r: Result<Events, ConnectError> = async {
        let req: e::ConnectRequest = Envelopes::new(body).single().await?;
        let sel = selector(req.process)?;
        let pid = match sel.selector {
            Some(pb::process_selector::Selector::Pid(p)) => Some(p),
            _ => None,
        };
        // Whether its output is a terminal's: envd says so per event.
        let listed = client(&ctx)
            .list_processes(ctx.req(pb::ListProcessesRequest {
                sandbox_id: ctx.sandbox_id.clone(),
                include_exited: true,
            })?)
            .await?
            .into_inner();
        let is_pty = listed.processes.iter().any(|p| {
            p.pty
                && match &sel.selector {
                    Some(pb::process_selector::Selector::Pid(n)) => p.pid == *n,
                    Some(pb::process_selector::Selector::Tag(t)) => &p.tag == t,
                    None => false,
                }
        });
        let msg = pb::ConnectProcessRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            process: Some(sel),
            after_seq: 0,
        };
        let s = client(&ctx)
            .connect_process(ctx.req(msg)?)
            .await?
            .into_inner();
        let s = s.map(|r| r.map(|m| m.event.unwrap_or_default()));
        Ok(with_deadline(events(&ctx, s, pid, is_pty), ctx.timeout))
    }
    .await;
    respond(r, |ev| e::ConnectResponse { event: Some(ev) })
}

fn respond<T: Named + Send + 'static>(
    r: Result<Events, ConnectError>,
    wrap: fn(e::ProcessEvent) -> T,
) -> Response {
    match r {
        Ok(s) => connect::server_stream(s.map(move |r| r.map(wrap))),
        Err(err) => connect::stream_result::<T>(Err(err)),
    }
}

async fn list(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let _: e::ListRequest = connect::from_json(&unary_body(body).await?)?;
    let r = client(ctx)
        .list_processes(ctx.req(pb::ListProcessesRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            include_exited: false,
        })?)
        .await?
        .into_inner();
    let processes = r
        .processes
        .into_iter()
        .filter(|p| p.running)
        .map(|p| {
            let mut cmd = p.command.into_iter();
            e::ProcessInfo {
                config: Some(e::ProcessConfig {
                    cmd: cmd.next().unwrap_or_default(),
                    args: cmd.collect(),
                    envs: Default::default(),
                    cwd: Some(p.cwd),
                }),
                pid: p.pid,
                tag: (!p.tag.is_empty()).then_some(p.tag),
            }
        })
        .collect();
    Ok(connect::unary(&e::ListResponse { processes }))
}

fn input_bytes(i: Option<e::ProcessInput>) -> Result<Vec<u8>, ConnectError> {
    use e::process_input::Input;
    match i.and_then(|i| i.input) {
        Some(Input::Stdin(b)) | Some(Input::Pty(b)) => Ok(b),
        None => Err(ConnectError::invalid("input: stdin or pty is required")),
    }
}

async fn send_input(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::SendInputRequest = connect::from_json(&unary_body(body).await?)?;
    let msg = pb::SendProcessInputRequest {
        sandbox_id: ctx.sandbox_id.clone(),
        process: Some(selector(r.process)?),
        data: input_bytes(r.input)?,
    };
    client(ctx)
        .send_process_input(ctx.req(tokio_stream::iter([msg]))?)
        .await?;
    Ok(connect::unary(&e::SendInputResponse {}))
}

/// The client stream: a `start` naming the process, then input and
/// keepalives, forwarded as one SendProcessInput stream.
async fn stream_input(ctx: &Ctx, body: Body) -> Result<e::StreamInputResponse, ConnectError> {
    use e::stream_input_request::Event;
    let mut env = Envelopes::new(body);
    let first: e::StreamInputRequest = connect::from_json(
        &env.next()
            .await?
            .ok_or_else(|| ConnectError::invalid("the stream has no start"))?,
    )?;
    let Some(Event::Start(start)) = first.event else {
        return Err(ConnectError::invalid("the first message must be start"));
    };
    let sel = selector(start.process)?;
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::SendProcessInputRequest>(16);
    let sandbox_id = ctx.sandbox_id.clone();
    let reader = async move {
        loop {
            let Some(m) = env.next().await? else {
                return Ok::<_, ConnectError>(());
            };
            let m: e::StreamInputRequest = connect::from_json(&m)?;
            if let Some(Event::Data(d)) = m.event {
                let msg = pb::SendProcessInputRequest {
                    sandbox_id: sandbox_id.clone(),
                    process: Some(sel.clone()),
                    data: input_bytes(d.input)?,
                };
                if tx.send(msg).await.is_err() {
                    return Ok(());
                }
            }
        }
    };
    let rx = tokio_stream::wrappers::ReceiverStream::new(rx);
    let mut c = client(ctx);
    let send = c.send_process_input(ctx.req(rx)?);
    let (read, sent) = tokio::join!(reader, send);
    sent?;
    read?;
    Ok(e::StreamInputResponse {})
}

async fn send_signal(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::SendSignalRequest = connect::from_json(&unary_body(body).await?)?;
    let signal = match e::Signal::try_from(r.signal) {
        Ok(e::Signal::Sigkill) => 9,
        Ok(e::Signal::Sigterm) => 15,
        _ => {
            return Err(ConnectError::invalid(
                "signal must be SIGNAL_SIGKILL or SIGNAL_SIGTERM",
            ));
        }
    };
    let sent = client(ctx)
        .send_process_signal(ctx.req(pb::SendProcessSignalRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            process: Some(selector(r.process)?),
            signal,
        })?)
        .await;
    match sent {
        Ok(_) => Ok(connect::unary(&e::SendSignalResponse {})),
        // envd knows running processes only: one that has exited is not
        // found (the SDKs' kill then returns false).
        Err(s) if s.code() == Code::FailedPrecondition => Err(ConnectError::new(
            Code::NotFound,
            format!("process not found: {}", s.message()),
        )),
        Err(s) => Err(s.into()),
    }
}

async fn close_stdin(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::CloseStdinRequest = connect::from_json(&unary_body(body).await?)?;
    client(ctx)
        .close_process_stdin(ctx.req(pb::CloseProcessStdinRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            process: Some(selector(r.process)?),
        })?)
        .await?;
    Ok(connect::unary(&e::CloseStdinResponse {}))
}

async fn update(ctx: &Ctx, body: Body) -> Result<Response, ConnectError> {
    let r: e::UpdateRequest = connect::from_json(&unary_body(body).await?)?;
    let Some(size) = pty_size(r.pty) else {
        return Ok(connect::unary(&e::UpdateResponse {}));
    };
    client(ctx)
        .resize_process_pty(ctx.req(pb::ResizeProcessPtyRequest {
            sandbox_id: ctx.sandbox_id.clone(),
            process: Some(selector(r.process)?),
            size: Some(size),
        })?)
        .await?;
    Ok(connect::unary(&e::UpdateResponse {}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn keepalives_fill_quiet_streams_and_end_with_them() {
        let s = futures::stream::once(async {
            tokio::time::sleep(Duration::from_millis(350)).await;
            Ok::<u8, ConnectError>(1)
        });
        let out: Vec<u8> = with_keepalive(s, Some(Duration::from_millis(100)), || 0)
            .map(|r| r.unwrap())
            .collect()
            .await;
        assert_eq!(out.last(), Some(&1));
        assert!(out.len() >= 2, "{out:?}");
        assert!(out[..out.len() - 1].iter().all(|k| *k == 0), "{out:?}");
        // No interval: the stream as it is.
        let plain: Vec<u8> = with_keepalive(futures::stream::iter([Ok(7u8)]), None, || 0)
            .map(|r| r.unwrap())
            .collect()
            .await;
        assert_eq!(plain, [7]);
    }

    #[tokio::test]
    async fn a_deadline_ends_the_stream_with_its_error() {
        let forever: Pin<Box<dyn Stream<Item = Result<u8, ConnectError>> + Send>> =
            Box::pin(futures::stream::pending());
        let out: Vec<_> = with_deadline(forever, Some(Duration::from_millis(50)))
            .collect()
            .await;
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].as_ref().unwrap_err().code, Code::DeadlineExceeded);
    }

    #[test]
    fn ends_read_like_envds() {
        let exited = |exit_code, signal| pb::ProcessExited {
            exit_code,
            signal,
            ..Default::default()
        };
        let e = end_of(&exited(3, 0));
        assert_eq!(
            (e.exit_code, e.exited, e.status.as_str()),
            (3, true, "exit status 3")
        );
        let e = end_of(&exited(0, 9));
        assert_eq!(
            (e.exit_code, e.exited, e.status.as_str()),
            (-1, false, "signal: killed")
        );
    }
}
