//! A TCP proxy a test can cut, to take a service (the database) away from
//! the processes under test and give it back, without stopping it for the
//! other tests that share it: while cut, every connection through it is
//! closed and new ones are closed on accept.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub struct Proxy {
    pub addr: SocketAddr,
    cut: Arc<AtomicBool>,
    /// Bumped by `cut`: connections of an older epoch end.
    epoch: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards to `target`.
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let cut = Arc::new(AtomicBool::new(false));
        let epoch = Arc::new(AtomicU64::new(0));
        let (c, e) = (cut.clone(), epoch.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    return;
                };
                if c.load(Ordering::SeqCst) {
                    continue;
                }
                let mine = e.load(Ordering::SeqCst);
                let e = e.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else {
                        return;
                    };
                    let copy = tokio::io::copy_bidirectional(&mut inbound, &mut outbound);
                    let watch = async {
                        while e.load(Ordering::SeqCst) == mine {
                            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        }
                    };
                    tokio::select! {
                        _ = copy => {}
                        _ = watch => {}
                    }
                });
            }
        });
        Proxy {
            addr,
            cut,
            epoch,
            task,
        }
    }

    /// The service is gone: open connections close, new ones are refused.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// The service is back.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
