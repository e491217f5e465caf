using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// Terminals over the gateway's WebSocket and directory watches, against
    /// a running gateway (TALON_URL, TALON_API_KEY); ignored without
    /// TALON_URL, as LiveTests.
    /// </summary>
    [TestFixture]
    public class LivePtyWatchTests
    {
        static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

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
                Metadata = new Dictionary<string, string> { ["suite"] = "dotnet-live" },
            });
            return _sbx;
        }

        /// <summary>Polls until the condition holds, or fails after Patience.</summary>
        static async Task Eventually(Func<bool> condition, Func<string> what)
        {
            var end = DateTime.UtcNow + Patience;
            while (!condition())
            {
                if (DateTime.UtcNow > end)
                    Assert.Fail("not within " + Patience.TotalSeconds + " s: " + what());
                await Task.Delay(50);
            }
        }

        [Test]
        public async Task AShellComputesAndExits()
        {
            NeedGateway();
            var sbx = await Create();
            var chunks = new List<byte[]>();
            using (var p = await sbx.Pty.CreateAsync(new PtyOptions { Cmd = new[] { "bash" }, OnData = b => { lock (chunks) chunks.Add(b); } }))
            {
                Assert.Greater(p.Pid, 0);
                await p.SendInputAsync("echo $((6*7))\n");
                await Eventually(() => p.Output.Contains("42\r\n"), () => p.Output);
                await p.SendInputAsync(Encoding.UTF8.GetBytes("exit 5\n"));
                var e = await AssertAsync.Throws<CommandExitException>(() => p.WaitAsync());
                Assert.AreEqual(5, e.ExitCode);
                StringAssert.Contains("42", e.Result.Stdout);
                Assert.AreEqual(p.Pid, e.Result.Pid);
                Assert.IsTrue(p.HasExited);
            }
            lock (chunks)
                StringAssert.Contains("42", Encoding.UTF8.GetString(chunks.SelectMany(c => c).ToArray()));
        }

        [Test]
        public async Task RunTypesTheInputAndWaitsForTheEnd()
        {
            NeedGateway();
            var sbx = await Create();
            // What the conformance op `pty` does: cmd, input, cols, rows.
            var r = await sbx.Pty.RunAsync("echo $((6*7))\nstty size\nexit\n", new PtyOptions { Cmd = new[] { "sh" }, Cols = 100, Rows = 40 });
            Assert.AreEqual(0, r.ExitCode);
            StringAssert.Contains("42", r.Stdout);
            StringAssert.Contains("40 100", r.Stdout);
            // The default is bash -l, with the options' environment and directory.
            var env = await sbx.Pty.RunAsync("echo \"[$GREETING]\" && pwd\nexit\n", new PtyOptions
            {
                Envs = new Dictionary<string, string> { ["GREETING"] = "hallo" },
                Cwd = "/tmp",
            });
            StringAssert.Contains("[hallo]", env.Stdout);
            StringAssert.Contains("/tmp\r\n", env.Stdout);
        }

        [Test]
        public async Task AResizeReachesTheTerminal()
        {
            NeedGateway();
            var sbx = await Create();
            using (var p = await sbx.Pty.CreateAsync(new PtyOptions { Cmd = new[] { "sh" }, Cols = 80, Rows = 24 }))
            {
                await p.SendInputAsync("stty size\n");
                await Eventually(() => p.Output.Contains("24 80"), () => p.Output);
                await p.ResizeAsync(132, 50);
                await p.SendInputAsync("stty size\n");
                await Eventually(() => p.Output.Contains("50 132"), () => p.Output);
                // Over REST by pid too, as the Python SDK's pty.resize.
                await sbx.Pty.ResizeAsync(p.Pid, 90, 30);
                await sbx.Pty.SendInputAsync(p.Pid, "stty size; exit\n");
                var r = await p.WaitAsync();
                StringAssert.Contains("30 90", r.Stdout);
            }
        }

        [Test]
        public async Task AKillEndsItWithTheSignal()
        {
            NeedGateway();
            var sbx = await Create();
            using (var p = await sbx.Pty.CreateAsync(new PtyOptions { Cmd = new[] { "sleep", "600" } }))
            {
                await p.KillAsync();
                var e = await AssertAsync.Throws<CommandExitException>(() => p.WaitAsync());
                Assert.AreEqual(9, e.Result.Signal);
                var procs = await sbx.Commands.ListAsync(includeExited: true);
                var mine = procs.Single(x => x.Pid == p.Pid);
                Assert.IsTrue(mine.Pty);
                Assert.IsFalse(mine.Running);
            }
            // The SDK's timeout kills it too.
            var t = await AssertAsync.Throws<CommandTimeoutException>(() =>
                sbx.Pty.RunAsync("", new PtyOptions { Cmd = new[] { "sleep", "600" }, Timeout = TimeSpan.FromSeconds(1) }));
            Assert.IsTrue(t.Result.TimedOut);
        }

        [Test]
        public async Task ATerminalOutlivesItsConnectionAndIsAttachedAgain()
        {
            NeedGateway();
            var sbx = await Create();
            int pid;
            using (var p = await sbx.Pty.CreateAsync(new PtyOptions { Cmd = new[] { "sh" }, Tag = "term" }))
                pid = p.Pid;
            using (var again = await sbx.Pty.ConnectAsync(pid, cols: 70, rows: 20))
            {
                Assert.AreEqual(pid, again.Pid);
                await again.SendInputAsync("stty size; exit 0\n");
                var r = await again.WaitAsync();
                StringAssert.Contains("20 70", r.Stdout);
            }
            var notPty = await sbx.Commands.StartAsync("sleep 600");
            await AssertAsync.Throws<FailedPreconditionException>(() => sbx.Pty.ConnectAsync(notPty.Pid));
            await AssertAsync.Throws<NotFoundException>(() => sbx.Pty.ConnectAsync(0, tag: "no-such-tag"));
        }

        [Test]
        public async Task AWrongKeyIsRefusedOnTheSocket()
        {
            NeedGateway();
            var sbx = await Create();
            // The gateway upgrades first and lets the server judge the key:
            // the refusal is an error frame, raised as its typed exception.
            sbx.Pty.OpenSocket = (url, ct) => PtyWire.ConnectAsync(url, "tln_not_a_key", ct);
            var e = await AssertAsync.Throws<AuthenticationException>(() => sbx.Pty.CreateAsync());
            Assert.AreEqual("UNAUTHENTICATED", e.Code);
        }

        [Test]
        public async Task AWatchSeesAFileCreatedWrittenAndRemoved()
        {
            NeedGateway();
            var sbx = await Create();
            await sbx.Files.MakeDirAsync("watched/sub");
            var seen = new List<FilesystemEvent>();
            using (var w = await sbx.Files.WatchDirAsync("watched", e => { lock (seen) seen.Add(e); }, recursive: true))
            {
                await sbx.Commands.RunAsync("echo one > /workspace/watched/sub/new.txt && echo two >> /workspace/watched/sub/new.txt");
                await sbx.Files.RemoveAsync("watched/sub/new.txt");
                Func<FilesystemEventType, bool> has = t => { lock (seen) return seen.Any(e => e.Type == t && e.Name == "sub/new.txt"); };
                Func<string> all = () => { lock (seen) return string.Join(", ", seen.Select(e => e.Type + " " + e.Path)); };
                await Eventually(() => has(FilesystemEventType.Create) && has(FilesystemEventType.Write) && has(FilesystemEventType.Remove), all);
                var polled = w.GetNewEvents();
                Assert.IsTrue(polled.Any(e => e.Type == FilesystemEventType.Create && e.Path == "/workspace/watched/sub/new.txt"), all());
                Assert.IsTrue(polled.All(e => e.Time.HasValue));
                Assert.IsTrue(w.IsRunning);
                w.Stop();
                await w.WaitAsync();
                Assert.IsNull(w.Error);
                Assert.IsFalse(w.IsRunning);
            }
            await AssertAsync.Throws<NotFoundException>(() => sbx.Files.WatchDirAsync("not-there"));
        }
    }
}
