package talon

// Snapshots of a sandbox's filesystem, and forks: new sandboxes from a
// sandbox's files now.

import (
	"context"
	"strconv"
	"time"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
)

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
