//! Errors in E2B's shape, `{"code": <HTTP status>, "message": …}`, with the
//! statuses its SDKs map to their exceptions (401, 404, 409, 429, 502,
//! 503), and `Retry-After` where Talon refuses for capacity.

use axum::response::{IntoResponse, Response};
use http::StatusCode;
use tonic::Code;

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn not_found(what: &str) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, format!("{what} not found"))
    }

    /// Something E2B has and this facade does not (yet): 501, saying so.
    pub fn unsupported(what: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            format!("{what} is not supported by Talon's E2B-compatible API"),
        )
    }
}

/// The HTTP status a gRPC status stands for here. Not-found and
/// permission-denied on another tenant's sandbox are both NOT_FOUND
/// upstream, so this leaks nothing either.
pub fn status_of(code: Code) -> StatusCode {
    match code {
        Code::InvalidArgument | Code::OutOfRange => StatusCode::BAD_REQUEST,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted | Code::FailedPrecondition => StatusCode::CONFLICT,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Code::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
        Code::Unimplemented => StatusCode::NOT_IMPLEMENTED,
        Code::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<tonic::Status> for ApiError {
    fn from(s: tonic::Status) -> ApiError {
        ApiError::new(status_of(s.code()), s.message().to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        talon_core::listen::trace::failed(self.status, &self.message);
        let body = serde_json::json!({"code": self.status.as_u16(), "message": self.message});
        let mut r = (self.status, axum::Json(body)).into_response();
        // Capacity refusals are worth a retry; the SDKs honour Retry-After.
        if matches!(
            self.status,
            StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE
        ) {
            r.headers_mut().insert(
                http::header::RETRY_AFTER,
                http::HeaderValue::from_static("1"),
            );
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_the_sdk_maps() {
        assert_eq!(status_of(Code::NotFound), StatusCode::NOT_FOUND);
        assert_eq!(status_of(Code::Unauthenticated), StatusCode::UNAUTHORIZED);
        assert_eq!(status_of(Code::FailedPrecondition), StatusCode::CONFLICT);
        assert_eq!(
            status_of(Code::ResourceExhausted),
            StatusCode::TOO_MANY_REQUESTS
        );
        assert_eq!(
            status_of(Code::Unavailable),
            StatusCode::SERVICE_UNAVAILABLE
        );
        let r = ApiError::from(tonic::Status::resource_exhausted("full")).into_response();
        assert_eq!(r.headers()[http::header::RETRY_AFTER], "1");
    }
}
