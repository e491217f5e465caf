// Agent runs through the Go SDK against a live `talon up` (TALON_URL,
// TALON_API_KEY; scripts/test.sh starts one).
package talon_test

import (
	"context"
	"testing"
	"time"

	talon "github.com/talon-sandbox/talon/clients/go"
)

func TestAgentRunConnectCancel(t *testing.T) {
	c := client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := c.Create(ctx, talon.CreateOptions{Template: "host", MemoryMiB: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), s.ID())
	d := "/workspace/go-" + runID()
	if err := s.Files.MakeDir(ctx, d); err != nil {
		t.Fatal(err)
	}
	var seen []talon.AgentEvent
	run, err := s.Agent().Run(ctx, []string{"/bin/sh", "-c", `read t; echo "go: $t"; echo 1 > ` + d + `/a.txt; exit 4`},
		talon.AgentOptions{Prompt: "task\n", OnEvent: func(e talon.AgentEvent) { seen = append(seen, e) }})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for i, e := range run.Events {
		kinds = append(kinds, e.Kind)
		if e.Seq != uint64(i+1) {
			t.Fatalf("seq %d at %d", e.Seq, i)
		}
	}
	want := []string{"started", "output", "fileChange", "completed"}
	if len(kinds) != len(want) || kinds[0] != want[0] || kinds[1] != want[1] || kinds[2] != want[2] || kinds[3] != want[3] {
		t.Fatalf("%v", kinds)
	}
	if run.ExitCode != 4 || run.Events[1].Text != "go: task" || run.Events[2].Path != d+"/a.txt" || run.Events[2].Change != "create" || len(seen) != 4 {
		t.Fatalf("%+v", run)
	}
	again, err := s.Agent().Connect(ctx, run.RunID, 2, nil)
	if err != nil || len(again.Events) != 2 || again.ExitCode != 4 {
		t.Fatalf("%v %+v", err, again)
	}
	ids := make(chan string, 1)
	done := make(chan talon.AgentRun, 1)
	go func() {
		r, err := s.Agent().Run(ctx, []string{"sleep", "60"}, talon.AgentOptions{OnEvent: func(e talon.AgentEvent) {
			if e.Kind == "started" {
				ids <- e.RunID
			}
		}})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	if err := s.Agent().Cancel(ctx, <-ids); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.ExitCode == 0 {
		t.Fatalf("%+v", r)
	}
}
