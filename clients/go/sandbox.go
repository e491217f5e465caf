package talon

// Sandboxes: creating, finding, listing and attaching to them, and the
// lifecycle of one (refresh, timeout, pause, resume, kill).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
)

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

// Kill deletes the sandbox and everything in it.
func (s *Sandbox) Kill(ctx context.Context) error {
	r, err := s.c.api.SandboxServiceDeleteSandboxWithResponse(ctx, s.Info.ID)
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}
