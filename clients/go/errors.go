package talon

// Errors: every failed call is an *Error named by its gRPC code, from the
// gateway's status body (code, message, details) or, lacking one, from
// the HTTP status.

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Error is a failed call. Code is the gRPC code name, e.g. "NOT_FOUND".
type Error struct {
	Code      string
	Message   string
	Status    int
	Details   []any
	RequestID string
}

func (e *Error) Error() string { return fmt.Sprintf("talon: %s: %s", e.Code, e.Message) }

// Is matches errors of the same code, so errors.Is(err, talon.ErrNotFound) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrInvalidArgument    = &Error{Code: "INVALID_ARGUMENT"}
	ErrNotFound           = &Error{Code: "NOT_FOUND"}
	ErrAlreadyExists      = &Error{Code: "ALREADY_EXISTS"}
	ErrPermissionDenied   = &Error{Code: "PERMISSION_DENIED"}
	ErrUnauthenticated    = &Error{Code: "UNAUTHENTICATED"}
	ErrFailedPrecondition = &Error{Code: "FAILED_PRECONDITION"}
	ErrResourceExhausted  = &Error{Code: "RESOURCE_EXHAUSTED"}
	ErrDeadlineExceeded   = &Error{Code: "DEADLINE_EXCEEDED"}
	ErrAborted            = &Error{Code: "ABORTED"}
	ErrUnavailable        = &Error{Code: "UNAVAILABLE"}
	ErrUnimplemented      = &Error{Code: "UNIMPLEMENTED"}
	ErrInternal           = &Error{Code: "INTERNAL"}
)

var codeNames = map[int]string{
	1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND",
	6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
	10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE",
	15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}

var httpNames = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 501: "UNIMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED",
}

func errorFrom(status int, body []byte, requestID string) *Error {
	var b struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
		Details []any  `json:"details"`
	}
	if json.Unmarshal(body, &b) == nil && b.Code != nil {
		name := codeNames[*b.Code]
		if name == "" {
			name = "UNKNOWN"
		}
		return &Error{Code: name, Message: b.Message, Status: status, Details: b.Details, RequestID: requestID}
	}
	name := httpNames[status]
	if name == "" {
		name = "INTERNAL"
	}
	return &Error{Code: name, Message: fmt.Sprintf("HTTP %d: %.200s", status, body), Status: status, RequestID: requestID}
}

// check turns a non-2xx response into an *Error.
func check(resp *http.Response, body []byte) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return errorFrom(resp.StatusCode, body, resp.Header.Get("x-request-id"))
}
