// Processes: Commands starts, runs and reattaches to them; CommandHandle
// follows one over its NDJSON event stream.

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
	"strconv"
	"strings"
	"sync"

	"github.com/talon-sandbox/talon/clients/go/internal/api"
)

// DefaultCommandTimeoutSecs is how long Run lets a command run when
// RunOptions.TimeoutSecs is 0 (E2B's default); a negative TimeoutSecs
// means no limit. Start (a background command) has no default limit.
const DefaultCommandTimeoutSecs = 60

// RunOptions shape a process; all are optional.
type RunOptions struct {
	Envs map[string]string
	Cwd  string
	User string
	// TimeoutSecs kills the process after this long: for Run, 0 is
	// DefaultCommandTimeoutSecs and a negative value no limit; for Start,
	// 0 is no limit.
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

// CommandExitError is a command that ended with a non-zero exit code or a
// signal; Run and Wait return it beside the result (errors.As finds it).
type CommandExitError struct{ Result *CommandResult }

func (e *CommandExitError) Error() string {
	if e.Result.Signal != 0 {
		return fmt.Sprintf("talon: the command ended with signal %d", e.Result.Signal)
	}
	return fmt.Sprintf("talon: the command ended with exit code %d: %s", e.Result.ExitCode, tail(e.Result.Stderr, 500))
}

// CommandTimeoutError is a command its timeout killed; errors.Is(err,
// ErrDeadlineExceeded) holds for it too.
type CommandTimeoutError struct {
	Result      *CommandResult
	TimeoutSecs float64
}

func (e *CommandTimeoutError) Error() string {
	return fmt.Sprintf("talon: the command ran longer than its timeout of %gs and was killed", e.TimeoutSecs)
}

// Is makes errors.Is(err, ErrDeadlineExceeded) true.
func (e *CommandTimeoutError) Is(target error) bool { return target == ErrDeadlineExceeded }

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// finish is the result and the error it stands for, if any.
func finish(r *CommandResult, timeoutSecs float64) (*CommandResult, error) {
	switch {
	case r.TimedOut:
		return r, &CommandTimeoutError{Result: r, TimeoutSecs: timeoutSecs}
	case r.ExitCode != 0 || r.Signal != 0:
		return r, &CommandExitError{Result: r}
	}
	return r, nil
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
	body    io.ReadCloser
	timeout float64
	// disconnected is set by Disconnect (under mu).
	disconnected bool
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

// Wait blocks until the process ends (or ctx is done). A non-zero exit
// is a *CommandExitError and a timeout a *CommandTimeoutError, each
// returned beside the result.
func (h *CommandHandle) Wait(ctx context.Context) (*CommandResult, error) {
	h.mu.Lock()
	gone := h.disconnected
	h.mu.Unlock()
	if gone {
		return nil, errors.New("talon: this handle was disconnected; Commands.Connect follows the process again")
	}
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
	return finish(r, h.timeout)
}

// Stdout is the output so far.
func (h *CommandHandle) Stdout() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.out.String()
}

// Stderr is the error output so far.
func (h *CommandHandle) Stderr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err.String()
}

// Disconnect stops following the process; it keeps running in the sandbox.
func (h *CommandHandle) Disconnect() {
	h.mu.Lock()
	h.disconnected = true
	h.mu.Unlock()
	h.body.Close()
	<-h.done
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
	return h.s.Pty.Resize(ctx, h.PID, cols, rows)
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
	h := &CommandHandle{s: c.s, Tag: tag, done: make(chan struct{}), started: make(chan struct{}), body: resp.Body}
	if o != nil && o.TimeoutSecs > 0 {
		h.timeout = o.TimeoutSecs
	}
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

// Run runs argv to its end and returns its output and exit code. A
// non-zero exit is a *CommandExitError, a timeout (60 s unless
// o.TimeoutSecs says otherwise) a *CommandTimeoutError; either comes with
// the result.
func (c *Commands) Run(ctx context.Context, argv []string, o *RunOptions) (*CommandResult, error) {
	ro := RunOptions{}
	if o != nil {
		ro = *o
	}
	switch {
	case ro.TimeoutSecs == 0:
		ro.TimeoutSecs = DefaultCommandTimeoutSecs
	case ro.TimeoutSecs < 0:
		ro.TimeoutSecs = 0
	}
	h, err := c.Start(ctx, argv, &ro)
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
