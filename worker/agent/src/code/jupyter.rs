//! A Jupyter kernel spoken to in the Jupyter messaging protocol (5.3):
//! the agent writes a connection file (loopback ports, a fresh HMAC key),
//! starts the kernel, and holds its shell and control channels (DEALER)
//! and IOPub (SUB) through `zmtp`. An `execute_request` on shell is
//! answered on IOPub by `stream`, `execute_result`, `display_data` and
//! `error` messages whose parent is the request, then `status: idle`.
//! Every message is signed with HMAC-SHA256 over its four JSON frames,
//! and unsigned or wrongly signed messages from the kernel are dropped.

use super::zmtp::{self, Socket, SocketType};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::net::SocketAddr;
use tonic::Status;

const DELIMITER: &[u8] = b"<IDS|MSG>";

/// The ports of a kernel's channels on the loopback.
#[derive(Clone, Debug)]
pub struct Ports {
    pub shell: u16,
    pub iopub: u16,
    pub stdin: u16,
    pub control: u16,
    pub hb: u16,
}

impl Ports {
    /// Five free loopback ports, picked by binding them.
    pub fn pick() -> std::io::Result<Ports> {
        let mut held = Vec::new();
        for _ in 0..5 {
            held.push(std::net::TcpListener::bind("127.0.0.1:0")?);
        }
        let p: Vec<u16> = held
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<std::io::Result<_>>()?;
        Ok(Ports {
            shell: p[0],
            iopub: p[1],
            stdin: p[2],
            control: p[3],
            hb: p[4],
        })
    }

    /// The connection file a kernel is started with.
    pub fn connection_file(&self, key: &str) -> Value {
        json!({
            "shell_port": self.shell, "iopub_port": self.iopub, "stdin_port": self.stdin,
            "control_port": self.control, "hb_port": self.hb, "ip": "127.0.0.1",
            "key": key, "transport": "tcp", "signature_scheme": "hmac-sha256",
            "kernel_name": "",
        })
    }
}

/// One message, its JSON parts parsed.
#[derive(Debug)]
pub struct Message {
    pub msg_type: String,
    pub parent_id: String,
    pub content: Value,
}

pub struct Session {
    signer: Signer,
    session: String,
    shell: zmtp::Sender,
    /// Never written to, but kept: dropping it would half-close the SUB
    /// connection, and the kernel would drop it.
    _iopub: zmtp::Sender,
    counter: u64,
    /// What the kernel sends on IOPub and on shell, each read by a task of
    /// its own so that a run can wait on both at once.
    pub inboxes: Inboxes,
}

/// Checks a kernel's signatures (and makes ours).
pub struct Signer {
    key: Vec<u8>,
}

pub struct Inboxes {
    pub iopub: zmtp::Inbox,
    pub shell: zmtp::Inbox,
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the kernel's {what}: {e}"))
}

impl Session {
    /// Connects to a started kernel's channels, retrying until `deadline`
    /// (a kernel binds its ports a moment after it starts).
    pub async fn connect(
        ports: &Ports,
        key: &str,
        deadline: tokio::time::Instant,
    ) -> Result<Session, Status> {
        let addr = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        let connect = async |port: u16, kind: SocketType, what: &str| loop {
            match Socket::connect(addr(port), kind).await {
                Ok(s) => return Ok(s),
                Err(e) if tokio::time::Instant::now() >= deadline => {
                    return Err(unavailable(what, e));
                }
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
            }
        };
        let iopub = connect(ports.iopub, SocketType::Sub, "iopub").await?;
        let shell = connect(ports.shell, SocketType::Dealer, "shell").await?;
        let (iopub_tx, iopub) = iopub.split();
        let (shell, shell_in) = shell.split();
        Ok(Session {
            signer: Signer {
                key: key.as_bytes().to_vec(),
            },
            session: format!("{:032x}", crate::files::rand_suffix() as u128),
            shell,
            _iopub: iopub_tx,
            counter: 0,
            inboxes: Inboxes {
                iopub,
                shell: shell_in,
            },
        })
    }

    /// Runs `code` silently (no output, no history, no execution count)
    /// and waits for its reply; an error in it is the call's. IOPub's
    /// messages of it are left for the next run to pass over.
    pub async fn run_silent(
        &mut self,
        code: &str,
        within: std::time::Duration,
    ) -> Result<(), Status> {
        let content = serde_json::json!({
            "code": code, "silent": true, "store_history": false,
            "user_expressions": {}, "allow_stdin": false, "stop_on_error": false,
        });
        let id = self.shell_request("execute_request", content).await?;
        let reply = tokio::time::timeout(within, async {
            loop {
                let r = self.shell_reply().await?;
                if r.parent_id == id {
                    return Ok::<Message, Status>(r);
                }
            }
        })
        .await
        .map_err(|_| Status::deadline_exceeded("the kernel did not answer"))??;
        if reply.content["status"] == "ok" {
            return Ok(());
        }
        Err(Status::internal(format!(
            "the kernel refused it: {} {}",
            reply.content["ename"].as_str().unwrap_or_default(),
            reply.content["evalue"].as_str().unwrap_or_default()
        )))
    }

    /// The inboxes and the signer apart, to wait on both inboxes at once.
    pub fn parts(&mut self) -> (&mut Inboxes, &Signer) {
        (&mut self.inboxes, &self.signer)
    }

    /// The next signed message on IOPub.
    pub async fn iopub(&mut self) -> Result<Message, Status> {
        let (i, s) = self.parts();
        i.iopub(s).await
    }

    /// The next signed message on shell.
    pub async fn shell_reply(&mut self) -> Result<Message, Status> {
        let (i, s) = self.parts();
        i.shell_reply(s).await
    }
}

impl Inboxes {
    /// The next signed message on IOPub (cancel-safe).
    pub async fn iopub(&mut self, s: &Signer) -> Result<Message, Status> {
        next(&mut self.iopub, s, "iopub").await
    }

    /// The next signed message on shell (cancel-safe).
    pub async fn shell_reply(&mut self, s: &Signer) -> Result<Message, Status> {
        next(&mut self.shell, s, "shell").await
    }
}

/// The next signed message of an inbox (cancel-safe).
pub async fn next(inbox: &mut zmtp::Inbox, s: &Signer, what: &str) -> Result<Message, Status> {
    loop {
        match inbox.recv().await {
            Some(Ok(parts)) => {
                if let Some(m) = s.parse(parts) {
                    return Ok(m);
                }
            }
            Some(Err(e)) => return Err(unavailable(what, e)),
            None => return Err(unavailable(what, "closed")),
        }
    }
}

impl Signer {
    fn sign(&self, parts: &[&[u8]]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        for p in parts {
            mac.update(p);
        }
        hex::encode(mac.finalize().into_bytes())
    }

    /// A message's parts after the delimiter, checked against its
    /// signature; None for anything malformed or unsigned.
    fn parse(&self, parts: Vec<Vec<u8>>) -> Option<Message> {
        let at = parts.iter().position(|p| p == DELIMITER)?;
        let rest = &parts[at + 1..];
        if rest.len() < 5 {
            return None;
        }
        let expected = self.sign(&[&rest[1], &rest[2], &rest[3], &rest[4]]);
        if !constant_eq(expected.as_bytes(), &rest[0]) {
            return None;
        }
        let header: Value = serde_json::from_slice(&rest[1]).ok()?;
        let parent: Value = serde_json::from_slice(&rest[2]).ok()?;
        Some(Message {
            msg_type: header["msg_type"].as_str()?.to_string(),
            parent_id: parent["msg_id"].as_str().unwrap_or_default().to_string(),
            content: serde_json::from_slice(&rest[4]).ok()?,
        })
    }
}

impl Session {
    fn frames(&mut self, msg_type: &str, content: &Value) -> (String, Vec<Vec<u8>>) {
        self.counter += 1;
        let id = format!("{}-{}", self.session, self.counter);
        let header = json!({
            "msg_id": id, "session": self.session, "username": "talon",
            "date": chrono_now(), "msg_type": msg_type, "version": "5.3",
        })
        .to_string()
        .into_bytes();
        let (parent, meta, content) = (
            b"{}".to_vec(),
            b"{}".to_vec(),
            content.to_string().into_bytes(),
        );
        let sig = self.signer.sign(&[&header, &parent, &meta, &content]);
        (
            id,
            vec![
                DELIMITER.to_vec(),
                sig.into_bytes(),
                header,
                parent,
                meta,
                content,
            ],
        )
    }

    /// Sends a request on shell; its id.
    pub async fn shell_request(
        &mut self,
        msg_type: &str,
        content: Value,
    ) -> Result<String, Status> {
        let (id, frames) = self.frames(msg_type, &content);
        self.shell
            .send(&frames)
            .await
            .map_err(|e| unavailable("shell", e))?;
        Ok(id)
    }
}

/// Compares signatures in time that does not depend on where they differ.
fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Now in ISO 8601 (UTC, microseconds), as Jupyter's headers carry it.
fn chrono_now() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    iso(d.as_secs() as i64, d.subsec_micros())
}

fn iso(secs: i64, micros: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_iso() {
        assert_eq!(iso(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(iso(1_800_000_000, 42), "2027-01-15T08:00:00.000042Z");
        assert_eq!(iso(951_782_400, 0), "2000-02-29T00:00:00.000000Z");
    }

    #[test]
    fn messages_are_signed_and_checked() {
        let s = Signer { key: b"k".to_vec() };
        let (h, p, m, c) = (
            b"{\"msg_type\":\"status\"}".to_vec(),
            b"{}".to_vec(),
            b"{}".to_vec(),
            b"{}".to_vec(),
        );
        let sig = s.sign(&[&h, &p, &m, &c]).into_bytes();
        let good = vec![
            DELIMITER.to_vec(),
            sig.clone(),
            h.clone(),
            p.clone(),
            m.clone(),
            c.clone(),
        ];
        assert_eq!(s.parse(good).unwrap().msg_type, "status");
        let mut forged = sig;
        forged[0] ^= 1;
        assert!(
            s.parse(vec![DELIMITER.to_vec(), forged, h, p, m, c])
                .is_none()
        );
        assert!(
            constant_eq(b"ab", b"ab") && !constant_eq(b"ab", b"ac") && !constant_eq(b"a", b"ab")
        );
    }
}
