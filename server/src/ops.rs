//! The ops port: liveness, readiness (the database answers) and metrics.
//! Its connections are held to the limits of every HTTP listener
//! (`talon_core::listen`): nothing here authenticates, so each counts
//! against the unauthenticated budget and is closed once idle, and a
//! flood of them can't take the process's file descriptors.

use crate::app::App;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use sea_orm::ConnectionTrait;
use std::sync::Arc;

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .route("/metrics", get(metrics))
        .with_state(app)
}

/// Serves the ops routes on `listener`, within `limits`, until `stop`.
pub async fn serve(
    app: Arc<App>,
    listener: tokio::net::TcpListener,
    limits: talon_core::listen::Limits,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> std::io::Result<()> {
    let listener = OpsListener {
        listener,
        admission: talon_core::listen::Admission::new(limits),
    };
    let routes = router(app).layer(axum::middleware::from_fn(in_flight));
    axum::serve(
        listener,
        routes.into_make_service_with_connect_info::<OpsConn>(),
    )
    .with_graceful_shutdown(async move {
        let _ = stop.wait_for(|s| *s).await;
    })
    .await
}

struct OpsListener {
    listener: tokio::net::TcpListener,
    admission: talon_core::listen::Admission,
}

impl axum::serve::Listener for OpsListener {
    type Io = talon_core::listen::Limited;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.admission.accept(&self.listener).await {
                Ok(admitted) => return admitted,
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

/// A request's connection, so it is not idle while the request is served.
#[derive(Clone)]
struct OpsConn(talon_core::listen::Conn);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, OpsListener>>
    for OpsConn
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, OpsListener>) -> Self {
        OpsConn(stream.io().conn())
    }
}

async fn in_flight(
    axum::extract::ConnectInfo(c): axum::extract::ConnectInfo<OpsConn>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let guard = c.0.request();
    let resp = next.run(req).await;
    resp.map(|b| axum::body::Body::new(talon_core::listen::Tracked::new(b, guard)))
}

async fn ready(State(app): State<Arc<App>>) -> (StatusCode, &'static str) {
    let stmt = sea_orm::Statement::from_string(app.db().get_database_backend(), "SELECT 1");
    match app.db().execute(stmt).await {
        Ok(_) => (StatusCode::OK, "ready\n"),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "database unavailable\n"),
    }
}

async fn metrics(
    State(app): State<Arc<App>>,
) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4",
        )],
        app.metrics().render(),
    )
}
