// Package talon is the Go SDK for Talon Sandbox. It is context-first and
// uses only net/http:
//
//	c, _ := talon.New()                                   // TALON_API_KEY, TALON_URL
//	sbx, _ := c.Create(ctx, talon.CreateOptions{})        // waits until it runs
//	r, _ := sbx.Commands.Run(ctx, talon.Shell("echo hi"), nil)
//	fmt.Print(r.Stdout, r.ExitCode)
//	sbx.Kill(ctx)
//
// Unary calls go through the client oapi-codegen generates from the OpenAPI
// document (internal/api); streams (NDJSON lines) and raw file bodies use
// net/http directly. Errors are *Error; compare with errors.Is against
// ErrNotFound and the other sentinels.
package talon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
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

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sets the credential (an API key or an access token).
func WithAPIKey(k string) Option { return func(c *Client) { c.apiKey = k } }

// WithBaseURL sets the REST gateway's address.
func WithBaseURL(u string) Option { return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") } }

// WithHTTPClient replaces the net/http client.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// Client talks to one Talon platform.
type Client struct {
	baseURL string
	apiKey  string
	http    *http.Client
	api     *api.ClientWithResponses
}

// New makes a client; unset options come from TALON_API_KEY and TALON_URL
// (default http://127.0.0.1:8080).
func New(opts ...Option) (*Client, error) {
	c := &Client{baseURL: strings.TrimRight(os.Getenv("TALON_URL"), "/"), apiKey: os.Getenv("TALON_API_KEY"), http: http.DefaultClient}
	if c.baseURL == "" {
		c.baseURL = "http://127.0.0.1:8080"
	}
	for _, o := range opts {
		o(c)
	}
	if c.apiKey == "" {
		return nil, &Error{Code: "UNAUTHENTICATED", Message: "no API key: use WithAPIKey or set TALON_API_KEY"}
	}
	auth := func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+c.apiKey)
		return nil
	}
	a, err := api.NewClientWithResponses(c.baseURL, api.WithHTTPClient(c.http), api.WithRequestEditorFn(auth))
	if err != nil {
		return nil, err
	}
	c.api = a
	return c, nil
}

// do sends a request of our own (streams, raw bodies) with the credential.
func (c *Client) do(ctx context.Context, method, path string, body io.Reader, header map[string]string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.apiKey)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, check(resp, b)
	}
	return resp, nil
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func seconds(d float64) string { return strconv.FormatFloat(d, 'f', -1, 64) + "s" }

// SandboxInfo is what the platform says about a sandbox.
type SandboxInfo struct {
	ID    string
	State string
	Image string
}

func infoOf(s *api.Sandbox) SandboxInfo {
	if s == nil {
		return SandboxInfo{}
	}
	st := strings.ToLower(strings.TrimPrefix(string(deref(s.State)), "SANDBOX_STATE_"))
	return SandboxInfo{ID: deref(s.SandboxId), State: st, Image: deref(s.Image)}
}

// CreateOptions shape a new sandbox; zero values take the server's defaults.
type CreateOptions struct {
	Image       string
	Envs        map[string]string
	Labels      map[string]string
	Secrets     []string
	TimeoutSecs float64
	CPUMillis   int64
	MemoryMiB   int64
	// NoWait returns at once instead of waiting until the sandbox runs.
	NoWait          bool
	WaitTimeoutSecs float64
}

// Sandbox is one sandbox.
type Sandbox struct {
	Info     SandboxInfo
	Commands *Commands
	Files    *Files
	Pty      *Pty
	c        *Client
}

func (c *Client) sandbox(i SandboxInfo) *Sandbox {
	s := &Sandbox{Info: i, c: c}
	s.Commands = &Commands{s}
	s.Files = &Files{s}
	s.Pty = &Pty{s}
	return s
}

// ID is the sandbox's id.
func (s *Sandbox) ID() string { return s.Info.ID }

func (s *Sandbox) path(rest string) string {
	return "/v1/sandboxes/" + url.PathEscape(s.Info.ID) + rest
}

// Create makes a sandbox and, unless NoWait, waits until it runs.
func (c *Client) Create(ctx context.Context, o CreateOptions) (*Sandbox, error) {
	body := api.Sandbox{Image: ptr(o.Image)}
	if o.Image == "" {
		body.Image = ptr("host")
	}
	if len(o.Envs) > 0 {
		body.Env = &o.Envs
	}
	if len(o.Labels) > 0 {
		body.Labels = &o.Labels
	}
	if len(o.Secrets) > 0 {
		body.SecretNames = &o.Secrets
	}
	if o.TimeoutSecs > 0 {
		body.Timeout = ptr(seconds(o.TimeoutSecs))
	}
	if o.CPUMillis > 0 || o.MemoryMiB > 0 {
		r := api.Resources{}
		if o.CPUMillis > 0 {
			r.CpuMillis = ptr(strconv.FormatInt(o.CPUMillis, 10))
		}
		if o.MemoryMiB > 0 {
			r.MemoryMib = ptr(strconv.FormatInt(o.MemoryMiB, 10))
		}
		body.Resources = &r
	}
	params := &api.SandboxServiceCreateSandboxParams{}
	if !o.NoWait {
		wait := o.WaitTimeoutSecs
		if wait == 0 {
			wait = 60
		}
		params.WaitUntilRunning = ptr(true)
		params.WaitTimeout = ptr(seconds(wait))
	}
	r, err := c.api.SandboxServiceCreateSandboxWithResponse(ctx, params, body)
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return c.sandbox(infoOf(r.JSON200.Sandbox)), nil
}

// Connect attaches to an existing sandbox.
func (c *Client) Connect(ctx context.Context, id string) (*Sandbox, error) {
	s := c.sandbox(SandboxInfo{ID: id})
	if _, err := s.Refresh(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// List returns one page of the caller's sandboxes and the next page's token.
func (c *Client) List(ctx context.Context, pageSize int, pageToken string) ([]SandboxInfo, string, error) {
	p := &api.SandboxServiceListSandboxesParams{}
	if pageSize > 0 {
		p.PageSize = ptr(int32(pageSize))
	}
	if pageToken != "" {
		p.PageToken = &pageToken
	}
	r, err := c.api.SandboxServiceListSandboxesWithResponse(ctx, p)
	if err != nil {
		return nil, "", err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, "", err
	}
	var out []SandboxInfo
	for i := range deref(r.JSON200.Sandboxes) {
		out = append(out, infoOf(&(*r.JSON200.Sandboxes)[i]))
	}
	return out, deref(r.JSON200.NextPageToken), nil
}

// Refresh reads the sandbox's state again.
func (s *Sandbox) Refresh(ctx context.Context) (SandboxInfo, error) {
	r, err := s.c.api.SandboxServiceGetSandboxWithResponse(ctx, s.Info.ID)
	if err != nil {
		return SandboxInfo{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return SandboxInfo{}, err
	}
	s.Info = infoOf(r.JSON200.Sandbox)
	return s.Info, nil
}

// Pause freezes every process of the sandbox.
func (s *Sandbox) Pause(ctx context.Context) error {
	r, err := s.c.api.SandboxServicePauseSandboxWithResponse(ctx, s.Info.ID, api.PauseSandboxRequest{})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// Resume thaws a paused sandbox.
func (s *Sandbox) Resume(ctx context.Context) error {
	r, err := s.c.api.SandboxServiceResumeSandboxWithResponse(ctx, s.Info.ID, api.ResumeSandboxRequest{})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// Kill deletes the sandbox and everything in it.
func (s *Sandbox) Kill(ctx context.Context) error {
	r, err := s.c.api.SandboxServiceDeleteSandboxWithResponse(ctx, s.Info.ID)
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// PreviewURL is a link to the port's preview that opens with no other
// credential: it carries a fresh preview token (valid ttlSecs, or the
// server's default when 0), which the gateway trades for a cookie of that
// preview only. In the form the gateway serves by default: a subdomain
// (http://PORT-ID.localhost:8080/ on loopback), where apps with
// root-absolute asset paths work. PreviewPathURL gives the path form, for
// clients that can't resolve *.localhost; PreviewAddress the bare path
// address, which needs an Authorization header.
func (s *Sandbox) PreviewURL(ctx context.Context, port int, ttlSecs float64) (string, error) {
	_, link, err := s.PreviewToken(ctx, port, ttlSecs)
	return link, err
}

// PreviewPathURL is PreviewURL in the path form (/preview/ID/PORT/?token=).
func (s *Sandbox) PreviewPathURL(ctx context.Context, port int, ttlSecs float64) (string, error) {
	token, _, err := s.PreviewToken(ctx, port, ttlSecs)
	if err != nil {
		return "", err
	}
	return s.PreviewAddress(port) + "?token=" + url.QueryEscape(token), nil
}

// PreviewAddress is the unsigned path-prefix address of a port's preview.
func (s *Sandbox) PreviewAddress(port int) string {
	return fmt.Sprintf("%s/preview/%s/%d/", s.c.baseURL, s.Info.ID, port)
}

// PreviewToken signs a short-lived token for one port of the sandbox.
func (s *Sandbox) PreviewToken(ctx context.Context, port int, ttlSecs float64) (token, link string, err error) {
	body := api.CreatePreviewTokenRequest{Port: ptr(uint32(port))}
	if ttlSecs > 0 {
		body.Ttl = ptr(seconds(ttlSecs))
	}
	r, err := s.c.api.PreviewServiceCreatePreviewTokenWithResponse(ctx, s.Info.ID, body)
	if err != nil {
		return "", "", err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return "", "", err
	}
	return deref(r.JSON200.Token), deref(r.JSON200.Url), nil
}

// Shell is an argv that runs cmd under `sh -c`.
func Shell(cmd string) []string { return []string{"sh", "-c", cmd} }

// RunOptions shape a process; all are optional.
type RunOptions struct {
	Envs        map[string]string
	Cwd         string
	User        string
	TimeoutSecs float64
	// Tag names the process for Connect.
	Tag string
	// Stdin is written to the process and then closed.
	Stdin    []byte
	OnStdout func([]byte)
	OnStderr func([]byte)
	pty      *[2]int
}

// CommandResult is a finished process.
type CommandResult struct {
	Stdout   string
	Stderr   string
	ExitCode int
	Signal   int
	TimedOut bool
	PID      int
}

type event struct {
	kind     string
	pid      int
	data     []byte
	seq      uint64
	exitCode int
	signal   int
	timedOut bool
}

func parseEvent(line []byte) (event, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return event{}, err
	}
	if e, ok := raw["error"]; ok {
		return event{}, errorFrom(0, e, "")
	}
	body := line
	if ev, ok := raw["event"]; ok {
		body = ev
	}
	var ev struct {
		Started *struct {
			Pid int `json:"pid"`
		} `json:"started"`
		Output *struct {
			Stream string `json:"stream"`
			Data   string `json:"data"`
			Seq    string `json:"seq"`
		} `json:"output"`
		Exited *struct {
			ExitCode int  `json:"exitCode"`
			Signal   int  `json:"signal"`
			TimedOut bool `json:"timedOut"`
		} `json:"exited"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return event{}, err
	}
	switch {
	case ev.Started != nil:
		return event{kind: "started", pid: ev.Started.Pid}, nil
	case ev.Output != nil:
		d, err := base64.StdEncoding.DecodeString(ev.Output.Data)
		if err != nil {
			return event{}, err
		}
		seq, _ := strconv.ParseUint(ev.Output.Seq, 10, 64)
		kind := "stdout"
		if ev.Output.Stream == "OUTPUT_STREAM_STDERR" {
			kind = "stderr"
		}
		return event{kind: kind, data: d, seq: seq}, nil
	case ev.Exited != nil:
		return event{kind: "exited", exitCode: ev.Exited.ExitCode, signal: ev.Exited.Signal, timedOut: ev.Exited.TimedOut}, nil
	}
	return event{kind: "unknown"}, nil
}

// CommandHandle is a process in the background, or reattached to.
type CommandHandle struct {
	PID     int
	Tag     string
	s       *Sandbox
	mu      sync.Mutex
	out     bytes.Buffer
	err     bytes.Buffer
	lastSeq uint64
	exit    *event
	failed  error
	done    chan struct{}
	started chan struct{}
}

func (h *CommandHandle) read(body io.ReadCloser, o *RunOptions) {
	defer close(h.done)
	defer body.Close()
	once := sync.Once{}
	defer once.Do(func() { close(h.started) })
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		e, err := parseEvent(sc.Bytes())
		if err != nil {
			h.failed = err
			return
		}
		h.mu.Lock()
		switch e.kind {
		case "started":
			h.PID = e.pid
		case "stdout", "stderr":
			if e.seq == 0 || e.seq > h.lastSeq {
				if e.seq > h.lastSeq {
					h.lastSeq = e.seq
				}
				if e.kind == "stdout" {
					h.out.Write(e.data)
					if o != nil && o.OnStdout != nil {
						o.OnStdout(e.data)
					}
				} else {
					h.err.Write(e.data)
					if o != nil && o.OnStderr != nil {
						o.OnStderr(e.data)
					}
				}
			}
		case "exited":
			ev := e
			h.exit = &ev
		}
		h.mu.Unlock()
		if h.PID != 0 || e.kind == "exited" {
			once.Do(func() { close(h.started) })
		}
	}
	if err := sc.Err(); err != nil && h.failed == nil {
		h.failed = err
	}
}

// Wait blocks until the process ends (or ctx is done).
func (h *CommandHandle) Wait(ctx context.Context) (*CommandResult, error) {
	select {
	case <-h.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if h.failed != nil {
		return nil, h.failed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	r := &CommandResult{Stdout: h.out.String(), Stderr: h.err.String(), ExitCode: -1, PID: h.PID}
	if h.exit != nil {
		r.ExitCode, r.Signal, r.TimedOut = h.exit.exitCode, h.exit.signal, h.exit.timedOut
	}
	return r, nil
}

// Kill sends a signal (9 when 0).
func (h *CommandHandle) Kill(ctx context.Context, signal int) error {
	return h.s.Commands.Signal(ctx, Target{PID: h.PID}, signal)
}

// SendStdin writes to the process's stdin (or PTY).
func (h *CommandHandle) SendStdin(ctx context.Context, data []byte) error {
	return h.s.Commands.SendStdin(ctx, Target{PID: h.PID}, data)
}

// CloseStdin closes the process's stdin.
func (h *CommandHandle) CloseStdin(ctx context.Context) error {
	return h.s.Commands.CloseStdin(ctx, Target{PID: h.PID})
}

// Resize changes a PTY's size.
func (h *CommandHandle) Resize(ctx context.Context, cols, rows int) error {
	b, _ := json.Marshal(map[string]any{"size": map[string]int{"cols": cols, "rows": rows}})
	resp, err := h.s.c.do(ctx, "POST", h.s.Commands.path(Target{PID: h.PID}, ":resize"), bytes.NewReader(b), map[string]string{"content-type": "application/json"})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Commands runs processes in a sandbox.
type Commands struct{ s *Sandbox }

// Target names a process by pid or tag.
type Target struct {
	PID int
	Tag string
}

func (c *Commands) path(t Target, verb string) string {
	if t.Tag != "" {
		return c.s.path("/processes/tags/" + url.PathEscape(t.Tag) + verb)
	}
	return c.s.path("/processes/" + strconv.Itoa(t.PID) + verb)
}

func (c *Commands) startStream(ctx context.Context, argv []string, o *RunOptions) (*http.Response, error) {
	if o == nil {
		o = &RunOptions{}
	}
	body := map[string]any{"command": argv, "stdin": o.Stdin != nil}
	if len(o.Envs) > 0 {
		body["env"] = o.Envs
	}
	if o.Cwd != "" {
		body["cwd"] = o.Cwd
	}
	if o.User != "" {
		body["user"] = o.User
	}
	if o.Tag != "" {
		body["tag"] = o.Tag
	}
	if o.TimeoutSecs > 0 {
		body["timeout"] = seconds(o.TimeoutSecs)
	}
	if o.pty != nil {
		body["pty"] = map[string]int{"cols": o.pty[0], "rows": o.pty[1]}
	}
	b, _ := json.Marshal(body)
	return c.s.c.do(ctx, "POST", c.s.path("/processes"), bytes.NewReader(b), map[string]string{"content-type": "application/json"})
}

func (c *Commands) handle(ctx context.Context, resp *http.Response, o *RunOptions, tag string) (*CommandHandle, error) {
	h := &CommandHandle{s: c.s, Tag: tag, done: make(chan struct{}), started: make(chan struct{})}
	go h.read(resp.Body, o)
	select {
	case <-h.started:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if h.failed != nil {
		return nil, h.failed
	}
	return h, nil
}

// Start runs argv in the background; the handle follows its output.
// The stream lives as long as ctx.
func (c *Commands) Start(ctx context.Context, argv []string, o *RunOptions) (*CommandHandle, error) {
	resp, err := c.startStream(ctx, argv, o)
	if err != nil {
		return nil, err
	}
	tag := ""
	if o != nil {
		tag = o.Tag
	}
	h, err := c.handle(ctx, resp, o, tag)
	if err != nil {
		return nil, err
	}
	if o != nil && o.Stdin != nil {
		if len(o.Stdin) > 0 {
			if err := h.SendStdin(ctx, o.Stdin); err != nil {
				return nil, err
			}
		}
		if err := h.CloseStdin(ctx); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Run runs argv to its end and returns its output and exit code.
func (c *Commands) Run(ctx context.Context, argv []string, o *RunOptions) (*CommandResult, error) {
	h, err := c.Start(ctx, argv, o)
	if err != nil {
		return nil, err
	}
	return h.Wait(ctx)
}

// Connect reattaches to a process by pid or tag; its output so far is replayed.
func (c *Commands) Connect(ctx context.Context, t Target, o *RunOptions) (*CommandHandle, error) {
	resp, err := c.s.c.do(ctx, "GET", c.path(t, ":connect"), nil, nil)
	if err != nil {
		return nil, err
	}
	h, err := c.handle(ctx, resp, o, t.Tag)
	if err != nil {
		return nil, err
	}
	if h.PID == 0 {
		h.PID = t.PID
	}
	return h, nil
}

// Signal sends a signal to a process (9 when 0).
func (c *Commands) Signal(ctx context.Context, t Target, signal int) error {
	if signal == 0 {
		signal = 9
	}
	b, _ := json.Marshal(map[string]int{"signal": signal})
	resp, err := c.s.c.do(ctx, "POST", c.path(t, ":signal"), bytes.NewReader(b), map[string]string{"content-type": "application/json"})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// SendStdin writes to a process's stdin.
func (c *Commands) SendStdin(ctx context.Context, t Target, data []byte) error {
	resp, err := c.s.c.do(ctx, "POST", c.path(t, ":input"), bytes.NewReader(data), map[string]string{"content-type": "application/octet-stream"})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// CloseStdin closes a process's stdin.
func (c *Commands) CloseStdin(ctx context.Context, t Target) error {
	resp, err := c.s.c.do(ctx, "POST", c.path(t, ":closeStdin"), strings.NewReader("{}"), map[string]string{"content-type": "application/json"})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// List returns the sandbox's processes.
func (c *Commands) List(ctx context.Context, includeExited bool) ([]api.ProcessInfo, error) {
	r, err := c.s.c.api.ProcessServiceListProcessesWithResponse(ctx, c.s.Info.ID, &api.ProcessServiceListProcessesParams{IncludeExited: &includeExited})
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return deref(r.JSON200.Processes), nil
}

// FileInfo describes a file in a sandbox.
type FileInfo struct {
	Path string
	Name string
	Type string // "file", "dir" or "symlink"
	Size int64
	Mode uint32
}

func fileInfo(f *api.FileInfo) FileInfo {
	if f == nil {
		return FileInfo{}
	}
	t := strings.ToLower(strings.TrimPrefix(string(deref(f.Type)), "FILE_TYPE_"))
	if t == "directory" {
		t = "dir"
	}
	size, _ := strconv.ParseInt(deref(f.Size), 10, 64)
	return FileInfo{Path: deref(f.Path), Name: deref(f.Name), Type: t, Size: size, Mode: deref(f.Mode)}
}

// Files reads and writes a sandbox's files. Relative paths are under /workspace.
type Files struct{ s *Sandbox }

// Write writes a whole file atomically.
func (f *Files) Write(ctx context.Context, path string, data []byte) (FileInfo, error) {
	q := url.Values{"path": {path}, "create_parents": {"true"}}
	resp, err := f.s.c.do(ctx, "POST", f.s.path("/files:write?"+q.Encode()), bytes.NewReader(data), map[string]string{"content-type": "application/octet-stream"})
	if err != nil {
		return FileInfo{}, err
	}
	defer resp.Body.Close()
	var out api.WriteFileResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return FileInfo{}, err
	}
	return fileInfo(out.Info), nil
}

// Read reads a whole file.
func (f *Files) Read(ctx context.Context, path string) ([]byte, error) {
	resp, err := f.s.c.do(ctx, "GET", f.s.path("/files:read?"+url.Values{"path": {path}}.Encode()), nil, map[string]string{"accept": "application/octet-stream"})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// List lists a directory.
func (f *Files) List(ctx context.Context, path string) ([]FileInfo, error) {
	r, err := f.s.c.api.FilesystemServiceListDirWithResponse(ctx, f.s.Info.ID, &api.FilesystemServiceListDirParams{Path: &path})
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	var out []FileInfo
	for i := range deref(r.JSON200.Entries) {
		out = append(out, fileInfo(&(*r.JSON200.Entries)[i]))
	}
	return out, nil
}

// Stat describes one path.
func (f *Files) Stat(ctx context.Context, path string) (FileInfo, error) {
	r, err := f.s.c.api.FilesystemServiceStatWithResponse(ctx, f.s.Info.ID, &api.FilesystemServiceStatParams{Path: &path})
	if err != nil {
		return FileInfo{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return FileInfo{}, err
	}
	return fileInfo(r.JSON200.Info), nil
}

// Exists says whether a path exists.
func (f *Files) Exists(ctx context.Context, path string) (bool, error) {
	_, err := f.Stat(ctx, path)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// MakeDir makes a directory and its parents.
func (f *Files) MakeDir(ctx context.Context, path string) error {
	r, err := f.s.c.api.FilesystemServiceMakeDirWithResponse(ctx, f.s.Info.ID, api.MakeDirRequest{Path: &path, Parents: ptr(true)})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// Rename moves a path.
func (f *Files) Rename(ctx context.Context, from, to string) error {
	r, err := f.s.c.api.FilesystemServiceMovePathWithResponse(ctx, f.s.Info.ID, api.MovePathRequest{SourcePath: &from, DestinationPath: &to})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// Remove removes a path (a directory's contents too when recursive).
func (f *Files) Remove(ctx context.Context, path string, recursive bool) error {
	r, err := f.s.c.api.FilesystemServiceRemovePathWithResponse(ctx, f.s.Info.ID, &api.FilesystemServiceRemovePathParams{Path: &path, Recursive: &recursive})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// FileEvent is one change WatchDir saw.
type FileEvent struct {
	Type string // "create", "write", "remove", …
	Path string
}

// Watch calls fn for each change under path until ctx is done.
func (f *Files) Watch(ctx context.Context, path string, recursive bool, fn func(FileEvent)) error {
	q := url.Values{"path": {path}, "recursive": {strconv.FormatBool(recursive)}}
	resp, err := f.s.c.do(ctx, "GET", f.s.path("/files:watch?"+q.Encode()), nil, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var e struct {
			Type string `json:"type"`
			Path string `json:"path"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			fn(FileEvent{Type: strings.ToLower(strings.TrimPrefix(e.Type, "FILE_EVENT_TYPE_")), Path: e.Path})
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}

// Pty opens terminals in a sandbox.
type Pty struct{ s *Sandbox }

// PtyOptions shape a terminal.
type PtyOptions struct {
	Cols, Rows int
	// Cmd is the program; a login shell when empty.
	Cmd    []string
	Envs   map[string]string
	Cwd    string
	Tag    string
	OnData func([]byte)
}

// Create starts a program under a PTY; send keystrokes with SendStdin.
func (p *Pty) Create(ctx context.Context, o PtyOptions) (*CommandHandle, error) {
	if o.Cols == 0 {
		o.Cols = 80
	}
	if o.Rows == 0 {
		o.Rows = 24
	}
	cmd := o.Cmd
	if len(cmd) == 0 {
		cmd = []string{"bash", "-l"}
	}
	ro := &RunOptions{Envs: o.Envs, Cwd: o.Cwd, Tag: o.Tag, OnStdout: o.OnData, Stdin: []byte{}, pty: &[2]int{o.Cols, o.Rows}}
	resp, err := p.s.Commands.startStream(ctx, cmd, ro)
	if err != nil {
		return nil, err
	}
	return p.s.Commands.handle(ctx, resp, ro, o.Tag)
}

// Identity is who a credential is.
type Identity struct {
	TenantID      string
	UserID        string
	Email         string
	Role          string
	APIKeyID      string
	PlatformAdmin bool
}

// WhoAmI says who the client's credential is.
func (c *Client) WhoAmI(ctx context.Context) (Identity, error) {
	r, err := c.api.AuthServiceWhoAmIWithResponse(ctx)
	if err != nil {
		return Identity{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return Identity{}, err
	}
	w := r.JSON200
	return Identity{
		TenantID:      deref(w.TenantId),
		UserID:        deref(w.UserId),
		Email:         deref(w.Email),
		Role:          strings.ToLower(strings.TrimPrefix(string(deref(w.Role)), "ROLE_")),
		APIKeyID:      deref(w.ApiKeyId),
		PlatformAdmin: deref(w.PlatformAdmin),
	}, nil
}
