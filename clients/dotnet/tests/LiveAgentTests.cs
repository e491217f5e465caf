using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// Agent runs against a running gateway (TALON_URL, TALON_API_KEY),
    /// with shell scripts as the agents, as conformance/cases/agent.yaml
    /// does. Ignored without TALON_URL.
    /// </summary>
    [TestFixture]
    public class LiveAgentTests
    {
        Sandbox _sbx;

        static void NeedGateway()
        {
            if (string.IsNullOrEmpty(Environment.GetEnvironmentVariable("TALON_URL")))
                Assert.Ignore("TALON_URL is not set: live tests need a running gateway (talon up)");
        }

        // Synchronous: NUnit 2.6 does not await an async TearDown. Dispose kills it.
        [TearDown]
        public void KillIt()
        {
            if (_sbx != null)
                _sbx.Dispose();
            _sbx = null;
        }

        async Task<Sandbox> Create()
        {
            _sbx = await Sandbox.CreateAsync(new SandboxOptions
            {
                Timeout = TimeSpan.FromMinutes(5),
                Metadata = new Dictionary<string, string> { ["suite"] = "dotnet-live-agent" },
            });
            return _sbx;
        }

        /// <summary>The conformance case agent/run-streams-in-order-and-replays, through this SDK.</summary>
        [Test]
        public async Task ARunStreamsInOrderAndAReattachByIdReplaysTheRest()
        {
            NeedGateway();
            var sbx = await Create();
            var run = await sbx.Agent.RunAsync(new[] { "/bin/sh", "-c",
                "read t; echo \"got $t\"; echo done >&2; echo 1 > /workspace/agent.txt; exit 2" }, "the task\n");
            Assert.AreEqual(new[] { "started", "output", "output", "file_change", "completed" }, run.Events.Select(e => e.KindName).ToArray());
            Assert.AreEqual(2, run.OutputLines.Count);
            StringAssert.Contains("got the task\n", run.Output);
            CollectionAssert.AreEquivalent(new[] { "got the task", "done" }, run.OutputLines);
            Assert.AreEqual(new[] { "create /workspace/agent.txt" }, run.FileChanges.Select(c => c.Change + " " + c.Path).ToArray());
            Assert.AreEqual(2, run.ExitCode);
            Assert.IsFalse(run.TimedOut);
            StringAssert.StartsWith("run_", run.RunId);
            Assert.AreEqual(Enumerable.Range(1, 5).Select(i => (long)i).ToArray(), run.Events.Select(e => e.Seq).ToArray());
            Assert.IsTrue(run.Events.All(e => e.Time.HasValue));

            var again = await sbx.Agent.ConnectAsync(run.RunId, 1);
            Assert.AreEqual(run.Events.Skip(1).Select(e => e.Seq).ToArray(), again.Events.Select(e => e.Seq).ToArray());
            Assert.AreEqual(run.Events.Skip(1).Select(e => e.KindName).ToArray(), again.Events.Select(e => e.KindName).ToArray());
            Assert.AreEqual(run.Output, again.Output);
            Assert.AreEqual(2, again.ExitCode);
            Assert.AreEqual("1\n", await sbx.Files.ReadTextAsync("agent.txt"));
        }

        [Test]
        public async Task ACommandLineGetsItsEnvironmentAndWorkingDirectory()
        {
            NeedGateway();
            var sbx = await Create();
            var run = await sbx.Agent.RunAsync("echo \"$GREETING\"; pwd; cat", "from stdin", new AgentRunOptions
            {
                Envs = new Dictionary<string, string> { ["GREETING"] = "hello agent" },
                Cwd = "/tmp",
            });
            Assert.AreEqual(new[] { "hello agent", "/tmp", "from stdin" }, run.OutputLines.ToArray());
            Assert.AreEqual(0, run.ExitCode);
        }

        [Test]
        public async Task EventsArriveWhileItRunsAndCancelEndsIt()
        {
            NeedGateway();
            var sbx = await Create();
            var ready = new TaskCompletionSource<AgentEvent>(TaskCreationOptions.RunContinuationsAsynchronously);
            var h = await sbx.Agent.StartAsync(new[] { "/bin/sh", "-c", "echo ready; exec sleep 600" }, "", new AgentRunOptions
            {
                OnEvent = e =>
                {
                    var o = e as AgentOutputEvent;
                    if (o != null && o.Text == "ready")
                        ready.TrySetResult(e);
                },
            });
            StringAssert.StartsWith("run_", h.RunId);
            Assert.Greater(h.Pid, 0);
            // The line comes while the agent still runs (it sleeps for ten minutes).
            Assert.AreSame(ready.Task, await Task.WhenAny(ready.Task, Task.Delay(TimeSpan.FromSeconds(30))), "no output event within 30 s");
            Assert.IsFalse(h.IsCompleted);
            await h.CancelAsync();
            var run = await h.WaitAsync(new CancellationTokenSource(TimeSpan.FromSeconds(60)).Token);
            Assert.AreEqual(137, run.ExitCode, "128 + SIGKILL");
            Assert.IsFalse(run.TimedOut);
            Assert.Less(run.Duration, TimeSpan.FromMinutes(5));
            Assert.AreEqual("ready\n", run.Output);
            // From 0, a reattach replays every event of the finished run.
            var replay = await sbx.Agent.ConnectAsync(run.RunId);
            Assert.AreEqual(run.Events.Select(e => e.Seq).ToArray(), replay.Events.Select(e => e.Seq).ToArray());
            Assert.AreEqual(h.RunId, ((AgentStartedEvent)replay.Events[0]).RunId);
        }

        [Test]
        public async Task ItsTimeoutEndsARun()
        {
            NeedGateway();
            var sbx = await Create();
            var run = await sbx.Agent.RunAsync(new[] { "sleep", "60" }, "", new AgentRunOptions { Timeout = TimeSpan.FromSeconds(1) });
            Assert.IsTrue(run.TimedOut);
            Assert.AreNotEqual(0, run.ExitCode);
            Assert.Less(run.Duration, TimeSpan.FromSeconds(30));
        }

        [Test]
        public async Task AnUnknownRunIsNotFound()
        {
            NeedGateway();
            var sbx = await Create();
            var e = await AssertAsync.Throws<NotFoundException>(() => sbx.Agent.ConnectAsync("run_doesnotexist"));
            Assert.AreEqual(404, e.Status);
            await AssertAsync.Throws<NotFoundException>(() => sbx.Agent.CancelAsync("run_doesnotexist"));
        }
    }
}
