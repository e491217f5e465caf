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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

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

// WithBaseURL sets the REST gateway's address; several servers of one
// platform, comma-separated, are tried in turn (servers.go).
func WithBaseURL(u string) Option { return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") } }

// WithHTTPClient replaces the net/http client.
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithHTTP2 speaks HTTP/2 to a plain-http gateway by prior knowledge
// (h2c, which the gateway serves; a proxy in between may not). Over https
// net/http negotiates HTTP/2 by itself. TALON_HTTP2=1 sets it too.
func WithHTTP2() Option { return func(c *Client) { c.h2c = true } }

// h2cClient is a client that speaks only HTTP/2, unencrypted.
func h2cClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Protocols = new(http.Protocols)
	t.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: t}
}

// Client talks to one Talon platform.
type Client struct {
	baseURL string
	apiKey  string
	http    *http.Client
	api     *api.ClientWithResponses
	h2c     bool
}

// New makes a client; unset options come from TALON_API_KEY and TALON_URL
// (default http://127.0.0.1:8080).
func New(opts ...Option) (*Client, error) {
	c := &Client{baseURL: strings.TrimRight(os.Getenv("TALON_URL"), "/"), apiKey: os.Getenv("TALON_API_KEY"), http: http.DefaultClient}
	if c.baseURL == "" {
		c.baseURL = "http://127.0.0.1:8080"
	}
	switch os.Getenv("TALON_HTTP2") {
	case "", "0", "false":
	case "1", "true":
		c.h2c = true
	default:
		return nil, &Error{Code: "INVALID_ARGUMENT", Message: "TALON_HTTP2 is 1/true or 0/false"}
	}
	for _, o := range opts {
		o(c)
	}
	if c.h2c && c.http == http.DefaultClient && strings.HasPrefix(c.baseURL, "http://") {
		c.http = h2cClient()
	}
	if c.apiKey == "" {
		return nil, &Error{Code: "UNAUTHENTICATED", Message: "no API key: use WithAPIKey or set TALON_API_KEY"}
	}
	urls, err := parseServers(c.baseURL)
	if err != nil {
		return nil, err
	}
	c.baseURL = urls[0].String()
	if len(urls) > 1 {
		inner := c.http.Transport
		if inner == nil {
			inner = http.DefaultTransport
		}
		h := *c.http
		h.Transport = &servers{urls: urls, inner: inner}
		c.http = &h
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
	// Image is the sandbox's image (E2B's template).
	Image    string
	Metadata map[string]string
	// StartedAt is when it was made; EndAt when its timeout passes.
	StartedAt time.Time
	EndAt     time.Time
	// SnapshotID is the snapshot it was created from ("" for none).
	SnapshotID string
	// Isolation is "container" or "gvisor".
	Isolation string
	// Raw is the whole record as the API gave it.
	Raw *api.Sandbox
}

func infoOf(s *api.Sandbox) SandboxInfo {
	if s == nil {
		return SandboxInfo{}
	}
	st := strings.ToLower(strings.TrimPrefix(string(deref(s.State)), "SANDBOX_STATE_"))
	iso := "container"
	if s.Isolation != nil {
		iso = strings.ToLower(strings.TrimPrefix(string(*s.Isolation), "ISOLATION_"))
	}
	return SandboxInfo{
		Isolation: iso,
		ID:        deref(s.SandboxId), State: st, Image: deref(s.Image), Metadata: deref(s.Metadata),
		StartedAt: deref(s.CreateTime), EndAt: deref(s.ExpireTime), SnapshotID: deref(s.SnapshotId), Raw: s,
	}
}

// NetworkOptions are E2B's network options: AllowOut names the only CIDRs,
// IPs and domains the sandbox may reach; DenyOut may only be
// ["0.0.0.0/0"] (Talon denies what is not allowed, and private ranges
// always).
type NetworkOptions struct {
	AllowOut []string
	DenyOut  []string
}

// CreateOptions shape a new sandbox; zero values take the server's defaults.
type CreateOptions struct {
	// Image is the image ("host" when empty); Template is E2B's name for it.
	Image    string
	Template string
	// SnapshotID starts it from a snapshot's files (CreateSnapshot), on
	// the snapshot's image; leave Image empty.
	SnapshotID string
	Envs       map[string]string
	Labels     map[string]string
	// Metadata is free-form, filterable in ListFiltered.
	Metadata map[string]string
	Secrets  []string
	// TimeoutSecs is how long it may live; then OnTimeout happens
	// ("pause", the default, or "kill").
	TimeoutSecs float64
	OnTimeout   string
	// IdleTimeoutSecs pauses it after this long without activity (calls,
	// output, input, preview traffic); AutoResume makes the next call to
	// it while paused resume it first.
	IdleTimeoutSecs float64
	AutoResume      bool
	// Isolation is "container" (the default) or "gvisor": a user-space
	// kernel between the code and the host's, where a worker offers it.
	Isolation string
	// AllowInternetAccess false seals the sandbox (nil: open).
	AllowInternetAccess *bool
	Network             *NetworkOptions
	// IdempotencyKey makes a retried create return the first one's sandbox (24 h).
	IdempotencyKey string
	CPUMillis      int64
	MemoryMiB      int64
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

// networkPolicy maps E2B's network options onto an egress policy.
func networkPolicy(o CreateOptions) (*api.NetworkPolicy, error) {
	if o.Network != nil {
		deny := o.Network.DenyOut
		if len(deny) > 0 && !(len(deny) == 1 && deny[0] == "0.0.0.0/0") {
			return nil, &Error{Code: "INVALID_ARGUMENT", Message: `DenyOut may only be ["0.0.0.0/0"]: Talon denies what is not allowed, and private ranges always`}
		}
		if len(o.Network.AllowOut) > 0 {
			cidrs, domains := []string{}, []string{}
			for _, a := range o.Network.AllowOut {
				if p, err := netip.ParsePrefix(a); err == nil {
					cidrs = append(cidrs, p.String())
				} else if ip, err := netip.ParseAddr(a); err == nil {
					cidrs = append(cidrs, netip.PrefixFrom(ip, ip.BitLen()).String())
				} else {
					domains = append(domains, a)
				}
			}
			return &api.NetworkPolicy{Mode: ptr(api.EGRESSMODEALLOWLIST), AllowCidrs: &cidrs, AllowDomains: &domains}, nil
		}
		if len(deny) > 0 {
			return &api.NetworkPolicy{Mode: ptr(api.EGRESSMODESEALED)}, nil
		}
	}
	if o.AllowInternetAccess != nil && !*o.AllowInternetAccess {
		return &api.NetworkPolicy{Mode: ptr(api.EGRESSMODESEALED)}, nil
	}
	return nil, nil
}

// Create makes a sandbox and, unless NoWait, waits until it runs.
func (c *Client) Create(ctx context.Context, o CreateOptions) (*Sandbox, error) {
	image := o.Image
	if image == "" {
		image = o.Template
	}
	body := api.Sandbox{}
	switch {
	case o.SnapshotID != "":
		body.SnapshotId = ptr(o.SnapshotID)
		if image != "" {
			body.Image = ptr(image) // refused by the server: one or the other
		}
	case image == "":
		body.Image = ptr("host")
	default:
		body.Image = ptr(image)
	}
	if len(o.Metadata) > 0 {
		body.Metadata = &o.Metadata
	}
	switch o.OnTimeout {
	case "":
	case "pause":
		body.TimeoutAction = ptr(api.SandboxTimeoutActionTIMEOUTACTIONPAUSE)
	case "kill":
		body.TimeoutAction = ptr(api.SandboxTimeoutActionTIMEOUTACTIONDELETE)
	default:
		return nil, &Error{Code: "INVALID_ARGUMENT", Message: fmt.Sprintf("OnTimeout is \"pause\" or \"kill\", not %q", o.OnTimeout)}
	}
	pol, err := networkPolicy(o)
	if err != nil {
		return nil, err
	}
	body.NetworkPolicy = pol
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
	if o.IdleTimeoutSecs > 0 {
		body.IdleTimeout = ptr(seconds(o.IdleTimeoutSecs))
	}
	if o.AutoResume {
		body.AutoResume = ptr(true)
	}
	switch o.Isolation {
	case "":
	case "container", "gvisor", "microvm":
		body.Isolation = ptr(api.SandboxIsolation("ISOLATION_" + strings.ToUpper(o.Isolation)))
	default:
		return nil, &Error{Code: "INVALID_ARGUMENT", Message: fmt.Sprintf("Isolation is \"container\", \"gvisor\" or \"microvm\", not %q", o.Isolation)}
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
	if o.IdempotencyKey != "" {
		params.IdempotencyKey = &o.IdempotencyKey
	}
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

// ConnectOptions adjust Connect.
type ConnectOptions struct {
	// TimeoutSecs sets how long the sandbox may live from now.
	TimeoutSecs float64
}

// Connect attaches to a sandbox: a paused one is resumed and a stopped one
// started; a deleted one is ErrNotFound.
func (c *Client) Connect(ctx context.Context, id string, opts ...ConnectOptions) (*Sandbox, error) {
	s := c.sandbox(SandboxInfo{ID: id})
	i, err := s.Refresh(ctx)
	if err != nil {
		return nil, err
	}
	switch i.State {
	case "deleted":
		return nil, &Error{Code: "NOT_FOUND", Message: "sandbox " + id + " was deleted"}
	case "failed":
		return nil, &Error{Code: "FAILED_PRECONDITION", Message: "sandbox " + id + " failed: " + deref(i.Raw.StateMessage)}
	case "paused":
		err = s.Resume(ctx)
	case "stopped":
		var r *api.SandboxServiceStartSandboxResponse
		if r, err = c.api.SandboxServiceStartSandboxWithResponse(ctx, id, api.StartSandboxRequest{}); err == nil {
			err = check(r.HTTPResponse, r.Body)
		}
	}
	if err != nil {
		return nil, err
	}
	timeout := 0.0
	for _, o := range opts {
		timeout = o.TimeoutSecs
	}
	if timeout > 0 {
		if err := s.SetTimeout(ctx, timeout); err != nil {
			return nil, err
		}
	}
	if i.State != "running" || timeout > 0 {
		if _, err := s.Refresh(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// GetInfo reads a sandbox by id without attaching to it (and without
// resuming it).
func (c *Client) GetInfo(ctx context.Context, id string) (SandboxInfo, error) {
	return c.sandbox(SandboxInfo{ID: id}).Refresh(ctx)
}

// Kill deletes a sandbox by id; false when there is no such sandbox.
func (c *Client) Kill(ctx context.Context, id string) (bool, error) {
	err := c.sandbox(SandboxInfo{ID: id}).Kill(ctx)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// ListOptions filter and page ListFiltered.
type ListOptions struct {
	// Metadata pairs every listed sandbox holds.
	Metadata map[string]string
	// States ("running", "paused", …); all but deleted ones when empty.
	States    []string
	PageSize  int
	PageToken string
}

var states = map[string]bool{"pending": true, "starting": true, "running": true, "paused": true, "stopping": true, "stopped": true, "failed": true, "deleted": true}

// ListFiltered returns one page of the caller's sandboxes, newest first,
// that match o, and the next page's token ("" on the last).
func (c *Client) ListFiltered(ctx context.Context, o ListOptions) ([]SandboxInfo, string, error) {
	q := url.Values{}
	for k, v := range o.Metadata {
		q.Set("metadata["+k+"]", v)
	}
	for _, st := range o.States {
		if !states[st] {
			return nil, "", &Error{Code: "INVALID_ARGUMENT", Message: fmt.Sprintf("unknown state %q", st)}
		}
		q.Add("states", "SANDBOX_STATE_"+strings.ToUpper(st))
	}
	if o.PageSize > 0 {
		q.Set("pageSize", strconv.Itoa(o.PageSize))
	}
	if o.PageToken != "" {
		q.Set("pageToken", o.PageToken)
	}
	resp, err := c.do(ctx, "GET", "/v1/sandboxes?"+q.Encode(), nil, nil)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	var page api.ListSandboxesResponse
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return nil, "", err
	}
	var out []SandboxInfo
	for i := range deref(page.Sandboxes) {
		out = append(out, infoOf(&(*page.Sandboxes)[i]))
	}
	return out, deref(page.NextPageToken), nil
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

// GetInfo is E2B's name for Refresh.
func (s *Sandbox) GetInfo(ctx context.Context) (SandboxInfo, error) { return s.Refresh(ctx) }

// IsRunning says whether the sandbox runs now.
func (s *Sandbox) IsRunning(ctx context.Context) (bool, error) {
	i, err := s.Refresh(ctx)
	return i.State == "running", err
}

// SetTimeout lets the sandbox live secs from now.
func (s *Sandbox) SetTimeout(ctx context.Context, secs float64) error {
	r, err := s.c.api.SandboxServiceSetSandboxTimeoutWithResponse(ctx, s.Info.ID, api.SetSandboxTimeoutRequest{Timeout: ptr(seconds(secs))})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
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

// SnapshotInfo is a snapshot of a sandbox's filesystem.
type SnapshotInfo struct {
	ID        string
	Name      string
	SandboxID string
	Image     string
	SizeBytes int64
	CreatedAt time.Time
	Raw       *api.Snapshot
}

func snapshotOf(s *api.Snapshot) SnapshotInfo {
	if s == nil {
		return SnapshotInfo{}
	}
	n, _ := strconv.ParseInt(deref(s.SizeBytes), 10, 64)
	return SnapshotInfo{
		ID: deref(s.SnapshotId), Name: deref(s.Name), SandboxID: deref(s.SandboxId),
		Image: deref(s.Image), SizeBytes: n, CreatedAt: deref(s.CreateTime), Raw: s,
	}
}

// CreateSnapshot copies the sandbox's filesystem (writable root,
// workspace, home) into a snapshot of the tenant ("" names it from the
// sandbox and the time); a running sandbox is frozen for the copy only.
// Processes and memory are not kept.
func (s *Sandbox) CreateSnapshot(ctx context.Context, name string) (SnapshotInfo, error) {
	body := api.CreateSnapshotRequest{}
	if name != "" {
		body.Name = ptr(name)
	}
	r, err := s.c.api.SandboxServiceCreateSnapshotWithResponse(ctx, s.Info.ID, body)
	if err != nil {
		return SnapshotInfo{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return SnapshotInfo{}, err
	}
	return snapshotOf(r.JSON200.Snapshot), nil
}

// Fork makes count (1 to 20) sandboxes from this one's files now, with its
// settings and each its own id, tokens and secrets; all running.
func (s *Sandbox) Fork(ctx context.Context, count int) ([]*Sandbox, error) {
	r, err := s.c.api.SandboxServiceForkSandboxWithResponse(ctx, s.Info.ID, api.ForkSandboxRequest{Count: ptr(int32(count))})
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	var out []*Sandbox
	for i := range deref(r.JSON200.Sandboxes) {
		out = append(out, s.c.sandbox(infoOf(&(*r.JSON200.Sandboxes)[i])))
	}
	return out, nil
}

// ListSnapshots is one page of the tenant's snapshots, newest first (of
// one sandbox when sandboxID is set), and the next page's token.
func (c *Client) ListSnapshots(ctx context.Context, sandboxID, pageToken string) ([]SnapshotInfo, string, error) {
	p := &api.SandboxServiceListSnapshotsParams{}
	if sandboxID != "" {
		p.SandboxId = &sandboxID
	}
	if pageToken != "" {
		p.PageToken = &pageToken
	}
	r, err := c.api.SandboxServiceListSnapshotsWithResponse(ctx, p)
	if err != nil {
		return nil, "", err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, "", err
	}
	var out []SnapshotInfo
	for i := range deref(r.JSON200.Snapshots) {
		out = append(out, snapshotOf(&(*r.JSON200.Snapshots)[i]))
	}
	return out, deref(r.JSON200.NextPageToken), nil
}

// GetSnapshot reads one snapshot.
func (c *Client) GetSnapshot(ctx context.Context, id string) (SnapshotInfo, error) {
	r, err := c.api.SandboxServiceGetSnapshotWithResponse(ctx, id)
	if err != nil {
		return SnapshotInfo{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return SnapshotInfo{}, err
	}
	return snapshotOf(r.JSON200.Snapshot), nil
}

// DeleteSnapshot deletes a snapshot; sandboxes made from it keep their files.
func (c *Client) DeleteSnapshot(ctx context.Context, id string) error {
	r, err := c.api.SandboxServiceDeleteSnapshotWithResponse(ctx, id)
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

// Shell is an argv that runs cmd under `sh -c`.
func Shell(cmd string) []string { return []string{"sh", "-c", cmd} }

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
