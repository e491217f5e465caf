package talon

// Agent runs: a command given a prompt on its stdin, whose output lines,
// workspace changes and end stream back numbered. A run outlives the
// stream: Run reattaches by itself when it drops, Connect by id.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// AgentEvent is one event of a run: Kind is "started" (PID, RunID),
// "output" (Stream "stdout"/"stderr", Text: one line), "fileChange"
// (Path, Change: "create", "write", "remove", "rename", "chmod") or
// "completed" (ExitCode, TimedOut, Duration).
type AgentEvent struct {
	Kind     string
	Seq      uint64
	PID      int
	RunID    string
	Stream   string
	Text     string
	Path     string
	Change   string
	ExitCode int
	TimedOut bool
	Duration time.Duration
}

// AgentRun is a completed run.
type AgentRun struct {
	RunID    string
	ExitCode int
	TimedOut bool
	Duration time.Duration
	Events   []AgentEvent
}

// AgentOptions are a run's options.
type AgentOptions struct {
	Prompt string
	Envs   map[string]string
	Cwd    string
	User   string
	// Secrets names tenant secrets given as environment variables
	// (redacted from every event).
	Secrets []string
	// Timeout is 30 minutes when zero.
	Timeout time.Duration
	OnEvent func(AgentEvent)
	// Reattach is how often to reattach when the stream drops (3 when 0).
	Reattach int
}

// Agent runs agents in one sandbox.
type Agent struct{ s *Sandbox }

// Agent is the sandbox's agent runs.
func (s *Sandbox) Agent() *Agent { return &Agent{s} }

func parseAgentEvent(line []byte) (AgentEvent, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		return AgentEvent{}, err
	}
	if e, ok := raw["error"]; ok {
		return AgentEvent{}, errorFrom(0, e, "")
	}
	body := line
	if ev, ok := raw["event"]; ok {
		body = ev
	}
	var ev struct {
		Seq     string `json:"seq"`
		Started *struct {
			Pid   int    `json:"pid"`
			RunID string `json:"runId"`
		} `json:"started"`
		Output *struct {
			Stream string `json:"stream"`
			Text   string `json:"text"`
		} `json:"output"`
		FileChange *struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"fileChange"`
		Completed *struct {
			ExitCode int    `json:"exitCode"`
			TimedOut bool   `json:"timedOut"`
			Duration string `json:"duration"`
		} `json:"completed"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return AgentEvent{}, err
	}
	seq, _ := strconv.ParseUint(ev.Seq, 10, 64)
	switch {
	case ev.Started != nil:
		return AgentEvent{Kind: "started", Seq: seq, PID: ev.Started.Pid, RunID: ev.Started.RunID}, nil
	case ev.Output != nil:
		stream := "stdout"
		if ev.Output.Stream == "OUTPUT_STREAM_STDERR" {
			stream = "stderr"
		}
		return AgentEvent{Kind: "output", Seq: seq, Stream: stream, Text: ev.Output.Text}, nil
	case ev.FileChange != nil:
		change := strings.ToLower(strings.TrimPrefix(ev.FileChange.Kind, "FILE_EVENT_TYPE_"))
		return AgentEvent{Kind: "fileChange", Seq: seq, Path: ev.FileChange.Path, Change: change}, nil
	case ev.Completed != nil:
		d, _ := time.ParseDuration(ev.Completed.Duration)
		return AgentEvent{Kind: "completed", Seq: seq, ExitCode: ev.Completed.ExitCode,
			TimedOut: ev.Completed.TimedOut, Duration: d}, nil
	}
	return AgentEvent{Kind: "unknown", Seq: seq}, nil
}

type agentState struct {
	events []AgentEvent
	last   uint64
	runID  string
	done   *AgentEvent
}

func (a *Agent) follow(body io.ReadCloser, st *agentState, onEvent func(AgentEvent)) error {
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		e, err := parseAgentEvent(sc.Bytes())
		if err != nil {
			return err
		}
		if e.Seq != 0 && e.Seq <= st.last {
			continue
		}
		if e.Seq != 0 {
			st.last = e.Seq
		}
		switch e.Kind {
		case "started":
			st.runID = e.RunID
		case "completed":
			ev := e
			st.done = &ev
		}
		st.events = append(st.events, e)
		if onEvent != nil {
			onEvent(e)
		}
	}
	return sc.Err()
}

func (a *Agent) runPath(runID, verb string) string {
	return a.s.path("/agent-runs/" + url.PathEscape(runID) + verb)
}

func (st *agentState) result() (AgentRun, error) {
	if st.done == nil {
		return AgentRun{}, fmt.Errorf("agent run %s ended without completing", st.runID)
	}
	return AgentRun{RunID: st.runID, ExitCode: st.done.ExitCode, TimedOut: st.done.TimedOut,
		Duration: st.done.Duration, Events: st.events}, nil
}

// Run runs command (argv) with the prompt on its stdin until it ends; a
// non-zero exit is not an error.
func (a *Agent) Run(ctx context.Context, command []string, o AgentOptions) (AgentRun, error) {
	body := map[string]any{"command": command, "prompt": o.Prompt}
	if len(o.Envs) > 0 {
		body["env"] = o.Envs
	}
	if o.Cwd != "" {
		body["cwd"] = o.Cwd
	}
	if o.User != "" {
		body["user"] = o.User
	}
	if len(o.Secrets) > 0 {
		body["secretNames"] = o.Secrets
	}
	if o.Timeout > 0 {
		body["timeout"] = fmt.Sprintf("%gs", o.Timeout.Seconds())
	}
	b, err := json.Marshal(body)
	if err != nil {
		return AgentRun{}, err
	}
	st := &agentState{}
	resp, err := a.s.c.do(ctx, "POST", a.s.path("/agent:run"), bytes.NewReader(b),
		map[string]string{"Content-Type": "application/json"})
	if err != nil {
		return AgentRun{}, err
	}
	ferr := a.follow(resp.Body, st, o.OnEvent)
	var te *Error
	if ferr != nil && (st.runID == "" || errors.As(ferr, &te)) {
		return AgentRun{}, ferr
	}
	tries := o.Reattach
	if tries == 0 {
		tries = 3
	}
	for i := 0; st.done == nil && st.runID != "" && i < tries && ctx.Err() == nil; i++ {
		resp, err := a.s.c.do(ctx, "GET", a.runPath(st.runID, ":connect")+"?afterSeq="+strconv.FormatUint(st.last, 10), nil, nil)
		if err != nil {
			if errors.As(err, &te) {
				return AgentRun{}, err
			}
			continue
		}
		if err := a.follow(resp.Body, st, o.OnEvent); err != nil && errors.As(err, &te) {
			return AgentRun{}, err
		}
	}
	return st.result()
}

// Connect follows a run by id from after afterSeq until it completes.
func (a *Agent) Connect(ctx context.Context, runID string, afterSeq uint64, onEvent func(AgentEvent)) (AgentRun, error) {
	st := &agentState{runID: runID, last: afterSeq}
	resp, err := a.s.c.do(ctx, "GET", a.runPath(runID, ":connect")+"?afterSeq="+strconv.FormatUint(afterSeq, 10), nil, nil)
	if err != nil {
		return AgentRun{}, err
	}
	if err := a.follow(resp.Body, st, onEvent); err != nil {
		return AgentRun{}, err
	}
	return st.result()
}

// Cancel kills a run's process tree; the run then completes.
func (a *Agent) Cancel(ctx context.Context, runID string) error {
	resp, err := a.s.c.do(ctx, "POST", a.runPath(runID, ":cancel"), strings.NewReader("{}"),
		map[string]string{"Content-Type": "application/json"})
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
