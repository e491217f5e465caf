// What a sandbox hands out and reports besides its processes and files:
// links to its ports and files that open with no other credential, and
// readings of what it uses.

package talon

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
)

// SandboxMetrics is what a sandbox uses at one moment.
type SandboxMetrics struct {
	Timestamp  time.Time
	CPUCount   int
	CPUUsedPct float64
	MemUsed    int64
	MemTotal   int64
	DiskUsed   int64
	DiskTotal  int64
}

// GetMetrics reads what the sandbox uses now (one reading, in a slice like
// E2B's series).
func (s *Sandbox) GetMetrics(ctx context.Context) ([]SandboxMetrics, error) {
	r, err := s.c.api.SandboxServiceGetSandboxMetricsWithResponse(ctx, s.Info.ID)
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	m := deref(r.JSON200.Metrics)
	n := func(p *string) int64 { v, _ := strconv.ParseInt(deref(p), 10, 64); return v }
	return []SandboxMetrics{{
		Timestamp: deref(m.SampleTime), CPUCount: int(deref(m.CpuCount)), CPUUsedPct: deref(m.CpuUsedPct),
		MemUsed: n(m.MemUsedBytes), MemTotal: n(m.MemTotalBytes), DiskUsed: n(m.DiskUsedBytes), DiskTotal: n(m.DiskTotalBytes),
	}}, nil
}

// GetHost is a URL of the port that a browser opens directly (a signed
// preview link; see PreviewURL).
func (s *Sandbox) GetHost(ctx context.Context, port int) (string, error) {
	return s.PreviewURL(ctx, port, 0)
}

func (s *Sandbox) fileURL(ctx context.Context, path string, op api.CreateFileUrlRequestOperation, ttlSecs float64) (string, error) {
	body := api.CreateFileUrlRequest{Path: &path, Operation: &op}
	if ttlSecs > 0 {
		body.Ttl = ptr(seconds(ttlSecs))
	}
	r, err := s.c.api.FilesystemServiceCreateFileUrlWithResponse(ctx, s.Info.ID, body)
	if err != nil {
		return "", err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return "", err
	}
	return deref(r.JSON200.Url), nil
}

// DownloadURL is a URL that downloads the file with a plain GET and no
// other credential, for ttlSecs (3600 when 0).
func (s *Sandbox) DownloadURL(ctx context.Context, path string, ttlSecs float64) (string, error) {
	return s.fileURL(ctx, path, api.FILEURLOPERATIONREAD, ttlSecs)
}

// UploadURL is a URL that replaces the file with the body of a POST
// (application/octet-stream) and no other credential.
func (s *Sandbox) UploadURL(ctx context.Context, path string, ttlSecs float64) (string, error) {
	return s.fileURL(ctx, path, api.FILEURLOPERATIONWRITE, ttlSecs)
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
