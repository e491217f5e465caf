//! Process output on the terminal, interactive exec and the PTY.

use super::*;

/// Process output as it comes: raw to stdout/stderr, or with
/// `--output json` one NDJSON event per line on stdout
/// (`{"stream", "data_b64"}`, then `{"exited": {...}}`).
#[derive(Clone, Copy)]
pub struct Events(pub Format);

impl Events {
    pub fn out(&self, stream: i32, data: &[u8]) -> std::io::Result<()> {
        if self.0 == Format::Json {
            use base64::Engine;
            let name = if stream == pb::OutputStream::Stderr as i32 {
                "stderr"
            } else {
                "stdout"
            };
            let b64 = base64::engine::general_purpose::STANDARD.encode(data);
            println!("{}", json!({"stream": name, "data_b64": b64}));
            Ok(())
        } else {
            write_stream(stream, data)
        }
    }

    fn exited(&self, x: &pb::ProcessExited) -> i32 {
        if self.0 == Format::Json {
            println!(
                "{}",
                json!({"exited": {"exit_code": x.exit_code, "signal": x.signal, "timed_out": x.timed_out}})
            );
        } else if x.timed_out {
            // Killed by its --timeout: say so, or the 137 reads like a crash.
            eprintln!("sandboxctl: the process timed out and was killed");
        }
        exit_code(x)
    }

    /// Prints a process's events to its end; its exit code.
    pub async fn drain(&self, h: &mut talon_sdk::CommandHandle) -> anyhow::Result<i32> {
        let mut code = 1;
        while let Some(o) = h.next().await? {
            match o {
                Output::Stdout(d) => self.out(pb::OutputStream::Stdout as i32, &d)?,
                Output::Stderr(d) => self.out(pb::OutputStream::Stderr as i32, &d)?,
                Output::Exited(x) => code = self.exited(&x),
                Output::Started(_) => {}
            }
        }
        Ok(code)
    }
}

pub fn write_stream(stream: i32, data: &[u8]) -> std::io::Result<()> {
    if stream == pb::OutputStream::Stderr as i32 {
        let mut e = std::io::stderr();
        e.write_all(data)?;
        e.flush()
    } else {
        let mut o = std::io::stdout();
        o.write_all(data)?;
        o.flush()
    }
}

pub async fn exec(
    s: &Sandbox,
    interactive: bool,
    mut o: RunOptions,
    command: &[String],
    ev: Events,
) -> anyhow::Result<i32> {
    o.open_stdin = interactive;
    let mut h = s.commands().start(command, o).await?;
    if interactive {
        let target = Target::Pid(h.pid);
        let s2 = s.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match tokio::task::block_in_place(|| std::io::stdin().read(&mut buf)) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if s2
                    .commands()
                    .send_stdin(&target, buf[..n].to_vec())
                    .await
                    .is_err()
                {
                    break;
                }
            }
            let _ = s2.commands().close_stdin(&target).await;
        });
    }
    ev.drain(&mut h).await
}

/// The terminal's size, or 80×24.
pub fn term_size() -> (u32, u32) {
    let mut ws = libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ fills a winsize we own.
    let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    if ok && ws.ws_col > 0 {
        (u32::from(ws.ws_col), u32::from(ws.ws_row))
    } else {
        (80, 24)
    }
}

/// Puts the terminal in raw mode until dropped.
pub struct RawMode(Option<libc::termios>);

impl RawMode {
    fn enter() -> RawMode {
        // SAFETY: tcgetattr/tcsetattr on stdin with termios we own.
        unsafe {
            if libc::isatty(0) != 1 {
                return RawMode(None);
            }
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return RawMode(None);
            }
            let saved = t;
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(0, libc::TCSANOW, &t);
            RawMode(Some(saved))
        }
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Some(t) = self.0 {
            // SAFETY: restores the attributes saved above.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, &t) };
        }
    }
}

pub async fn pty(s: &Sandbox, command: &[String], (cols, rows): (u32, u32)) -> anyhow::Result<i32> {
    use pb::attach_request::Message as In;
    use pb::attach_response::Message as OutMsg;
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::AttachRequest>(64);
    tx.send(pb::AttachRequest {
        sandbox_id: s.id().into(),
        message: Some(In::Open(pb::PtyOpen {
            target: Some(pb::pty_open::Target::Command(pb::PtyCommand {
                command: command.to_vec(),
                ..Default::default()
            })),
            size: Some(pb::PtySize { rows, cols }),
        })),
    })
    .await?;
    let mut out = s
        .client()
        .pty()
        .attach(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await?
        .into_inner();
    let _raw = RawMode::enter();
    let input = tx.clone();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = match tokio::task::spawn_blocking(move || {
                let r = std::io::stdin().read(&mut buf);
                (r, buf)
            })
            .await
            {
                Ok((Ok(n), b)) if n > 0 => {
                    buf = b;
                    n
                }
                _ => break,
            };
            let msg = pb::AttachRequest {
                sandbox_id: String::new(),
                message: Some(In::Input(buf[..n].to_vec())),
            };
            if input.send(msg).await.is_err() {
                break;
            }
        }
    });
    let resize = tx.clone();
    tokio::spawn(async move {
        let Ok(mut winch) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())
        else {
            return;
        };
        while winch.recv().await.is_some() {
            let (cols, rows) = term_size();
            let msg = pb::AttachRequest {
                sandbox_id: String::new(),
                message: Some(In::Resize(pb::PtySize { rows, cols })),
            };
            if resize.send(msg).await.is_err() {
                break;
            }
        }
    });
    let mut code = 0;
    while let Some(m) = out.message().await? {
        match m.message {
            Some(OutMsg::Output(d)) => {
                let mut o = std::io::stdout();
                o.write_all(&d)?;
                o.flush()?;
            }
            Some(OutMsg::Exited(x)) => {
                code = exit_code(&x);
                break;
            }
            _ => {}
        }
    }
    Ok(code)
}
