//! The ops port: liveness, readiness (the database answers) and metrics.

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

async fn ready(State(app): State<Arc<App>>) -> (StatusCode, &'static str) {
    let stmt = sea_orm::Statement::from_string(app.db.get_database_backend(), "SELECT 1");
    match app.db.execute(stmt).await {
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
        app.metrics.render(),
    )
}
