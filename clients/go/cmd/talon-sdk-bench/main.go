// Command talon-sdk-bench is talon-bench's Go SDK driver: Create,
// Commands.Run of `true` and a write+read of BENCH_FILE_MIB MiB, each
// timed in ms, printed as {"create": [...], "exec": [...], "file": [...]}.
// TALON_URL, TALON_API_KEY, BENCH_RUNS, BENCH_WARMUP, BENCH_FILE_RUNS.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	talon "github.com/talon-sandbox/talon/clients/go"
)

func env(k string) int {
	n, err := strconv.Atoi(os.Getenv(k))
	if err != nil {
		panic(k + ": " + err.Error())
	}
	return n
}

func ms(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1e3 }

func main() {
	runs, warm, mib, fileRuns := env("BENCH_RUNS"), env("BENCH_WARMUP"), env("BENCH_FILE_MIB"), env("BENCH_FILE_RUNS")
	ctx := context.Background()
	c, err := talon.New()
	if err != nil {
		panic(err)
	}
	out := map[string][]float64{"create": {}, "exec": {}, "file": {}}
	s, err := c.Create(ctx, talon.CreateOptions{})
	if err != nil {
		panic(err)
	}
	for i := 0; i < warm*4+runs*2; i++ {
		t0 := time.Now()
		r, err := s.Commands.Run(ctx, []string{"true"}, nil)
		if err != nil || r.ExitCode != 0 {
			panic(fmt.Sprint(err, r))
		}
		if i >= warm*4 {
			out["exec"] = append(out["exec"], ms(t0))
		}
	}
	data := make([]byte, mib<<20)
	for i := range data {
		data[i] = byte(i*7 + i/4093)
	}
	for i := 0; i < fileRuns+1; i++ {
		t0 := time.Now()
		if _, err := s.Files.Write(ctx, "/tmp/sdk.bin", data); err != nil {
			panic(err)
		}
		back, err := s.Files.Read(ctx, "/tmp/sdk.bin")
		if err != nil || !bytes.Equal(back, data) {
			panic(fmt.Sprint("the file came back different: ", err))
		}
		if i > 0 {
			out["file"] = append(out["file"], ms(t0))
		}
	}
	_ = s.Kill(ctx)
	// Creates last: each kill leaves teardown work on the worker, which
	// would run beside the exec figures.
	for i := 0; i < warm+runs; i++ {
		t0 := time.Now()
		s, err := c.Create(ctx, talon.CreateOptions{})
		if err != nil {
			panic(err)
		}
		t := ms(t0)
		_ = s.Kill(ctx)
		if i >= warm {
			out["create"] = append(out["create"], t)
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
