// Files and terminals: Files reads and writes (raw bodies, NDJSON
// watches); Pty opens terminals, which are processes with a CommandHandle.

package talon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
)

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
