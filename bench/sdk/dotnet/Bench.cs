// talon-bench's .NET SDK driver (Talon.Sdk built by Mono's mcs, run under
// mono): Sandbox.CreateAsync(), Commands.RunAsync(["true"]) and a write+read
// of BENCH_FILE_MIB MiB, each timed in ms, as bench/sdk/bench.mjs does.
// Prints {"create": [...], "exec": [...], "file": [...]}. TALON_URL,
// TALON_API_KEY, BENCH_RUNS, BENCH_WARMUP, BENCH_FILE_MIB, BENCH_FILE_RUNS.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Threading.Tasks;
using Talon;

static class Bench
{
    static int Env(string k) => int.Parse(Environment.GetEnvironmentVariable(k) ?? "0");

    static string Json(List<double> v) =>
        "[" + string.Join(",", v.Select(x => x.ToString("R", System.Globalization.CultureInfo.InvariantCulture))) + "]";

    static async Task Run()
    {
        int runs = Env("BENCH_RUNS"), warm = Env("BENCH_WARMUP"), mib = Env("BENCH_FILE_MIB"), fileRuns = Env("BENCH_FILE_RUNS");
        var create = new List<double>();
        var exec = new List<double>();
        var file = new List<double>();
        var argv = new[] { "true" };
        var sbx = await Sandbox.CreateAsync();
        try
        {
            for (var i = 0; i < warm * 4 + runs * 2; i++)
            {
                var t = Stopwatch.StartNew();
                var r = await sbx.Commands.RunAsync(argv);
                var ms = t.Elapsed.TotalMilliseconds;
                if (r.ExitCode != 0)
                    throw new Exception("true exited " + r.ExitCode);
                if (i >= warm * 4)
                    exec.Add(ms);
            }
            var data = new byte[mib << 20];
            for (var i = 0; i < data.Length; i++)
                data[i] = (byte)(i * 7 + i / 4093);
            for (var i = 0; i < fileRuns + 1; i++)
            {
                var t = Stopwatch.StartNew();
                await sbx.Files.WriteAsync("/tmp/sdk.bin", data);
                var back = await sbx.Files.ReadBytesAsync("/tmp/sdk.bin");
                var ms = t.Elapsed.TotalMilliseconds;
                if (!back.SequenceEqual(data))
                    throw new Exception("the file came back different");
                if (i > 0)
                    file.Add(ms);
            }
        }
        finally
        {
            await sbx.KillAsync();
        }
        // Creates last: each kill leaves teardown work on the worker, which
        // would run beside the exec figures.
        for (var i = 0; i < warm + runs; i++)
        {
            var t = Stopwatch.StartNew();
            var s = await Sandbox.CreateAsync();
            var ms = t.Elapsed.TotalMilliseconds;
            await s.KillAsync();
            if (i >= warm)
                create.Add(ms);
        }
        Console.WriteLine("{\"create\":" + Json(create) + ",\"exec\":" + Json(exec) + ",\"file\":" + Json(file) + "}");
    }

    static int Main()
    {
        Run().GetAwaiter().GetResult();
        return 0;
    }
}
