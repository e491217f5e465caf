//! Just enough ZMTP 3.0 (ZeroMQ's wire protocol, rfc.zeromq.org/spec/23)
//! to be a DEALER or SUB peer of a Jupyter kernel on the sandbox's
//! loopback: the NULL mechanism, multipart messages, and a SUB's
//! subscription sent as a message (the 3.0 form, which 3.1 peers accept
//! from a 3.0 peer). The agent is a static binary with no C library to
//! link libzmq into, and a kernel's sockets need nothing more.

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc;

/// The largest frame read; a kernel's messages (a plot as base64, say)
/// stay far below it.
pub const MAX_FRAME: u64 = 256 << 20;
/// The most frames one message may have.
const MAX_PARTS: usize = 4096;

const MORE: u8 = 0x01;
const LONG: u8 = 0x02;
const COMMAND: u8 = 0x04;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SocketType {
    Dealer,
    Sub,
}

impl SocketType {
    fn name(self) -> &'static str {
        match self {
            SocketType::Dealer => "DEALER",
            SocketType::Sub => "SUB",
        }
    }
}

/// Reads go through a buffer (a message is several small frames, each
/// a header and a body); a message is written with one call.
pub struct Socket {
    r: BufReader<OwnedReadHalf>,
    w: OwnedWriteHalf,
}

/// The sending half of a socket whose messages are read by a task of
/// their own (`Socket::split`): the channel's receive is cancel-safe,
/// where a frame read abandoned in a `select!` would lose its place.
pub struct Sender {
    w: OwnedWriteHalf,
}

/// Messages a socket's reader task received, in order; an error ends them.
pub type Inbox = mpsc::Receiver<std::io::Result<Vec<Vec<u8>>>>;

fn bad(msg: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.into())
}

impl Socket {
    /// Connects, greets, and exchanges READY; a SUB subscribes to every
    /// topic.
    pub async fn connect(addr: std::net::SocketAddr, kind: SocketType) -> std::io::Result<Socket> {
        let mut stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let mut greeting = [0u8; 64];
        greeting[0] = 0xFF;
        greeting[9] = 0x7F;
        greeting[10] = 3;
        greeting[11] = 0;
        greeting[12..16].copy_from_slice(b"NULL");
        stream.write_all(&greeting).await?;
        let mut theirs = [0u8; 64];
        stream.read_exact(&mut theirs).await?;
        if theirs[0] != 0xFF || theirs[9] != 0x7F || theirs[10] < 3 {
            return Err(bad("not a ZMTP 3 peer"));
        }
        if &theirs[12..16] != b"NULL" || theirs[16..32].iter().any(|b| *b != 0) {
            return Err(bad("the peer wants a security mechanism other than NULL"));
        }
        let (r, w) = stream.into_split();
        let mut s = Socket {
            r: BufReader::new(r),
            w,
        };
        s.send_frame(COMMAND, &ready(kind)).await?;
        let (flags, body) = s.read_frame().await?;
        if flags & COMMAND == 0 || !body.starts_with(b"\x05READY") {
            return Err(bad("the peer did not answer READY"));
        }
        if kind == SocketType::Sub {
            s.send(&[b"\x01".to_vec()]).await?;
        }
        Ok(s)
    }

    async fn send_frame(&mut self, flags: u8, body: &[u8]) -> std::io::Result<()> {
        let mut buf = Vec::new();
        frame(&mut buf, flags, body);
        self.w.write_all(&buf).await
    }

    async fn read_frame(&mut self) -> std::io::Result<(u8, Vec<u8>)> {
        read_frame(&mut self.r).await
    }

    /// Sends one multipart message.
    pub async fn send(&mut self, parts: &[Vec<u8>]) -> std::io::Result<()> {
        send(&mut self.w, parts).await
    }

    /// Hands the reading to a task; its messages come on the inbox. The
    /// task ends when the peer closes, on a protocol error (the inbox's
    /// last item), or when the inbox is dropped.
    pub fn split(self) -> (Sender, Inbox) {
        let (tx, rx) = mpsc::channel(256);
        let mut r = self.r;
        tokio::spawn(async move {
            loop {
                let m = recv(&mut r).await;
                let end = m.is_err();
                if tx.send(m).await.is_err() || end {
                    return;
                }
            }
        });
        (Sender { w: self.w }, rx)
    }
}

impl Sender {
    /// Sends one multipart message.
    pub async fn send(&mut self, parts: &[Vec<u8>]) -> std::io::Result<()> {
        send(&mut self.w, parts).await
    }
}

/// Appends one frame: its flags, its length (short or long), its body.
fn frame(buf: &mut Vec<u8>, flags: u8, body: &[u8]) {
    if body.len() > 255 {
        buf.push(flags | LONG);
        buf.extend_from_slice(&(body.len() as u64).to_be_bytes());
    } else {
        buf.push(flags);
        buf.push(body.len() as u8);
    }
    buf.extend_from_slice(body);
}

async fn send(w: &mut OwnedWriteHalf, parts: &[Vec<u8>]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(parts.iter().map(|p| p.len() + 9).sum());
    for (i, p) in parts.iter().enumerate() {
        let more = if i + 1 < parts.len() { MORE } else { 0 };
        frame(&mut buf, more, p);
    }
    w.write_all(&buf).await
}

async fn read_frame(r: &mut BufReader<OwnedReadHalf>) -> std::io::Result<(u8, Vec<u8>)> {
    let flags = r.read_u8().await?;
    let len = if flags & LONG != 0 {
        r.read_u64().await?
    } else {
        u64::from(r.read_u8().await?)
    };
    if len > MAX_FRAME {
        return Err(bad(format!("a {len}-byte frame")));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body).await?;
    Ok((flags, body))
}

async fn recv(r: &mut BufReader<OwnedReadHalf>) -> std::io::Result<Vec<Vec<u8>>> {
    let mut parts = Vec::new();
    loop {
        let (flags, body) = read_frame(r).await?;
        if flags & COMMAND != 0 {
            continue;
        }
        parts.push(body);
        if parts.len() > MAX_PARTS {
            return Err(bad("a message of too many frames"));
        }
        if flags & MORE == 0 {
            return Ok(parts);
        }
    }
}

/// A READY command naming the socket type.
fn ready(kind: SocketType) -> Vec<u8> {
    let mut b = vec![5];
    b.extend_from_slice(b"READY");
    let name = b"Socket-Type";
    b.push(name.len() as u8);
    b.extend_from_slice(name);
    let v = kind.name().as_bytes();
    b.extend_from_slice(&(v.len() as u32).to_be_bytes());
    b.extend_from_slice(v);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_names_the_socket_type() {
        let r = ready(SocketType::Dealer);
        assert_eq!(&r[..6], b"\x05READY");
        assert_eq!(&r[6..18], b"\x0bSocket-Type");
        assert_eq!(&r[18..22], &6u32.to_be_bytes());
        assert_eq!(&r[22..], b"DEALER");
    }
}
