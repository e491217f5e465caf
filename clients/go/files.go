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
	"sync"

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

// FileOption adjusts one file call.
type FileOption func(*fileOpts)

type fileOpts struct {
	user    string
	mode    uint32
	onEvent func(FileEvent)
}

// AsUser makes the call act as a user of the sandbox: that user's
// permissions, and what it creates is theirs.
func AsUser(user string) FileOption { return func(o *fileOpts) { o.user = user } }

// WithMode sets a new file's permission bits (Write).
func WithMode(mode uint32) FileOption { return func(o *fileOpts) { o.mode = mode } }

// OnEvent is called for each change WatchDir sees.
func OnEvent(fn func(FileEvent)) FileOption { return func(o *fileOpts) { o.onEvent = fn } }

func optsOf(opts []FileOption) fileOpts {
	var o fileOpts
	for _, f := range opts {
		f(&o)
	}
	return o
}

func (o fileOpts) query(q url.Values) string {
	if o.user != "" {
		q.Set("user", o.user)
	}
	return q.Encode()
}

func (o fileOpts) userPtr() *string {
	if o.user == "" {
		return nil
	}
	return &o.user
}

// Files reads and writes a sandbox's files. Relative paths are under /workspace.
type Files struct{ s *Sandbox }

// Write writes a whole file atomically.
func (f *Files) Write(ctx context.Context, path string, data []byte, opts ...FileOption) (FileInfo, error) {
	return f.WriteFrom(ctx, path, bytes.NewReader(data), opts...)
}

// WriteFrom writes a whole file atomically from r, streamed.
func (f *Files) WriteFrom(ctx context.Context, path string, r io.Reader, opts ...FileOption) (FileInfo, error) {
	o := optsOf(opts)
	q := url.Values{"path": {path}, "create_parents": {"true"}}
	if o.mode != 0 {
		q.Set("mode", strconv.FormatUint(uint64(o.mode), 10))
	}
	resp, err := f.s.c.do(ctx, "POST", f.s.path("/files:write?"+o.query(q)), r, map[string]string{"content-type": "application/octet-stream"})
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

// WriteEntry is one file of WriteFiles.
type WriteEntry struct {
	Path string
	Data []byte
}

// WriteFiles writes several files, each atomically, in order.
func (f *Files) WriteFiles(ctx context.Context, files []WriteEntry, opts ...FileOption) ([]FileInfo, error) {
	var out []FileInfo
	for _, e := range files {
		i, err := f.Write(ctx, e.Path, e.Data, opts...)
		if err != nil {
			return out, err
		}
		out = append(out, i)
	}
	return out, nil
}

// Read reads a whole file.
func (f *Files) Read(ctx context.Context, path string, opts ...FileOption) ([]byte, error) {
	body, err := f.ReadStream(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(body)
}

// ReadStream opens a file for reading as it streams in; close it when done.
func (f *Files) ReadStream(ctx context.Context, path string, opts ...FileOption) (io.ReadCloser, error) {
	q := optsOf(opts).query(url.Values{"path": {path}})
	resp, err := f.s.c.do(ctx, "GET", f.s.path("/files:read?"+q), nil, map[string]string{"accept": "application/octet-stream"})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// List lists a directory.
func (f *Files) List(ctx context.Context, path string, opts ...FileOption) ([]FileInfo, error) {
	o := optsOf(opts)
	r, err := f.s.c.api.FilesystemServiceListDirWithResponse(ctx, f.s.Info.ID, &api.FilesystemServiceListDirParams{Path: &path, User: o.userPtr()})
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
func (f *Files) Stat(ctx context.Context, path string, opts ...FileOption) (FileInfo, error) {
	o := optsOf(opts)
	r, err := f.s.c.api.FilesystemServiceStatWithResponse(ctx, f.s.Info.ID, &api.FilesystemServiceStatParams{Path: &path, User: o.userPtr()})
	if err != nil {
		return FileInfo{}, err
	}
	if err := check(r.HTTPResponse, r.Body); err != nil {
		return FileInfo{}, err
	}
	return fileInfo(r.JSON200.Info), nil
}

// GetInfo is E2B's name for Stat.
func (f *Files) GetInfo(ctx context.Context, path string, opts ...FileOption) (FileInfo, error) {
	return f.Stat(ctx, path, opts...)
}

// Exists says whether a path exists.
func (f *Files) Exists(ctx context.Context, path string, opts ...FileOption) (bool, error) {
	_, err := f.Stat(ctx, path, opts...)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// MakeDir makes a directory and its parents.
func (f *Files) MakeDir(ctx context.Context, path string, opts ...FileOption) error {
	o := optsOf(opts)
	r, err := f.s.c.api.FilesystemServiceMakeDirWithResponse(ctx, f.s.Info.ID, api.MakeDirRequest{Path: &path, Parents: ptr(true), User: o.userPtr()})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// Rename moves a path.
func (f *Files) Rename(ctx context.Context, from, to string, opts ...FileOption) error {
	o := optsOf(opts)
	r, err := f.s.c.api.FilesystemServiceMovePathWithResponse(ctx, f.s.Info.ID, api.MovePathRequest{SourcePath: &from, DestinationPath: &to, User: o.userPtr()})
	if err != nil {
		return err
	}
	return check(r.HTTPResponse, r.Body)
}

// Remove removes a path (a directory's contents too when recursive).
func (f *Files) Remove(ctx context.Context, path string, recursive bool, opts ...FileOption) error {
	o := optsOf(opts)
	r, err := f.s.c.api.FilesystemServiceRemovePathWithResponse(ctx, f.s.Info.ID, &api.FilesystemServiceRemovePathParams{Path: &path, Recursive: &recursive, User: o.userPtr()})
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

func (f *Files) watchStream(ctx context.Context, path string, recursive bool, o fileOpts) (io.ReadCloser, error) {
	q := o.query(url.Values{"path": {path}, "recursive": {strconv.FormatBool(recursive)}})
	resp, err := f.s.c.do(ctx, "GET", f.s.path("/files:watch?"+q), nil, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

func readEvents(body io.Reader, fn func(FileEvent)) error {
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		var e struct {
			Type  string          `json:"type"`
			Path  string          `json:"path"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if len(e.Error) > 0 {
			return errorFrom(0, e.Error, "")
		}
		fn(FileEvent{Type: strings.ToLower(strings.TrimPrefix(e.Type, "FILE_EVENT_TYPE_")), Path: e.Path})
	}
	return sc.Err()
}

// Watch calls fn for each change under path until ctx is done.
func (f *Files) Watch(ctx context.Context, path string, recursive bool, fn func(FileEvent)) error {
	body, err := f.watchStream(ctx, path, recursive, fileOpts{})
	if err != nil {
		return err
	}
	defer body.Close()
	err = readEvents(body, fn)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// WatchHandle is a running WatchDir.
type WatchHandle struct {
	mu     sync.Mutex
	events []FileEvent
	err    error
	body   io.ReadCloser
	done   chan struct{}
	closed bool
}

// GetNewEvents returns the events that arrived since the last call, oldest first.
func (w *WatchHandle) GetNewEvents() []FileEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.events
	w.events = nil
	return out
}

// Err is why the watch ended by itself, if it did.
func (w *WatchHandle) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Stop ends the watch.
func (w *WatchHandle) Stop() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.body.Close()
	<-w.done
}

// WatchDir watches path until Stop: poll GetNewEvents, or pass OnEvent.
// The watch is open when it returns, so no later change is missed.
func (f *Files) WatchDir(ctx context.Context, path string, recursive bool, opts ...FileOption) (*WatchHandle, error) {
	o := optsOf(opts)
	body, err := f.watchStream(context.WithoutCancel(ctx), path, recursive, o)
	if err != nil {
		return nil, err
	}
	w := &WatchHandle{body: body, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		err := readEvents(body, func(e FileEvent) {
			w.mu.Lock()
			w.events = append(w.events, e)
			w.mu.Unlock()
			if o.onEvent != nil {
				o.onEvent(e)
			}
		})
		w.mu.Lock()
		if !w.closed {
			w.err = err
		}
		w.mu.Unlock()
	}()
	return w, nil
}

// Pty opens terminals in a sandbox.
type Pty struct{ s *Sandbox }

// PtyOptions shape a terminal.
type PtyOptions struct {
	Cols, Rows int
	// Cmd is the program; a login shell when empty.
	Cmd  []string
	Envs map[string]string
	Cwd  string
	Tag  string
	// User runs it as that user; the image's default when empty.
	User string
	// TimeoutSecs kills it after this long; no limit when 0.
	TimeoutSecs float64
	OnData      func([]byte)
}

// Create starts a program under a PTY; send keystrokes with SendInput.
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
	ro := &RunOptions{Envs: o.Envs, Cwd: o.Cwd, Tag: o.Tag, User: o.User, TimeoutSecs: o.TimeoutSecs, OnStdout: o.OnData, Stdin: []byte{}, pty: &[2]int{o.Cols, o.Rows}}
	resp, err := p.s.Commands.startStream(ctx, cmd, ro)
	if err != nil {
		return nil, err
	}
	return p.s.Commands.handle(ctx, resp, ro, o.Tag)
}

// Connect reattaches to a terminal by pid: its output so far, then on.
func (p *Pty) Connect(ctx context.Context, pid int, onData func([]byte)) (*CommandHandle, error) {
	return p.s.Commands.Connect(ctx, Target{PID: pid}, &RunOptions{OnStdout: onData})
}

// Resize changes a terminal's size.
func (p *Pty) Resize(ctx context.Context, pid, cols, rows int) error {
	b, _ := json.Marshal(map[string]any{"size": map[string]int{"cols": cols, "rows": rows}})
	resp, err := p.s.c.do(ctx, "POST", p.s.Commands.path(Target{PID: pid}, ":resize"), bytes.NewReader(b), map[string]string{"content-type": "application/json"})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// SendInput writes keystrokes to a terminal.
func (p *Pty) SendInput(ctx context.Context, pid int, data []byte) error {
	return p.s.Commands.SendStdin(ctx, Target{PID: pid}, data)
}

// Kill ends a terminal's program (SIGKILL).
func (p *Pty) Kill(ctx context.Context, pid int) error {
	return p.s.Commands.Signal(ctx, Target{PID: pid}, 9)
}
