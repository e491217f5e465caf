using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>Agent runs against canned gateway streams: the body sent, typed events, reattach, replay, cancel.</summary>
    [TestFixture]
    public class AgentTests
    {
        const string RunPath = "/v1/sandboxes/sbx-1/agent:run";

        [Test]
        public async Task RunSendsTheBodyAndReadsEveryKindTyped()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Lines.Started(1, "run_1", 7), Lines.Output(2, "got the task"),
                Lines.Output(3, "done", stderr: true), Lines.Change(4, "FILE_EVENT_TYPE_CREATE", "/workspace/agent.txt"),
                Lines.Completed(5, 2, duration: "0.205036865s")));
            var seen = new List<AgentEvent>();
            var run = await t.Item1.Agent.RunAsync(new[] { "/bin/sh", "-c", "read t; echo got $t" }, "the task\n", new AgentRunOptions
            {
                Envs = new Dictionary<string, string> { ["X"] = "1" },
                Cwd = "/workspace/app",
                User = "user",
                Secrets = new[] { "OPENAI_API_KEY" },
                Timeout = TimeSpan.FromMinutes(5),
                OnEvent = seen.Add,
            });
            var req = t.Item2.Last;
            t.Item2.AssertLast("POST", RunPath);
            Assert.AreEqual("application/json", req.ContentType);
            var expected = JObject.Parse(@"{""command"": [""/bin/sh"", ""-c"", ""read t; echo got $t""], ""prompt"": ""the task\n"",
                ""env"": {""X"": ""1""}, ""cwd"": ""/workspace/app"", ""user"": ""user"", ""secretNames"": [""OPENAI_API_KEY""], ""timeout"": ""300s""}");
            Assert.IsTrue(JToken.DeepEquals(expected, req.Json), req.Body);

            Assert.AreEqual(new[] { "started", "output", "output", "file_change", "completed" }, run.Events.Select(e => e.KindName).ToArray());
            Assert.AreEqual(run.Events, seen);
            Assert.AreEqual(new long[] { 1, 2, 3, 4, 5 }, run.Events.Select(e => e.Seq).ToArray());
            var started = (AgentStartedEvent)run.Events[0];
            Assert.AreEqual("run_1", started.RunId);
            Assert.AreEqual(7, started.Pid);
            var err = (AgentOutputEvent)run.Events[2];
            Assert.IsTrue(err.IsStderr);
            Assert.AreEqual("stderr", err.Stream);
            Assert.AreEqual("stdout", ((AgentOutputEvent)run.Events[1]).Stream);
            Assert.AreEqual("run_1", run.RunId);
            Assert.AreEqual(2, run.ExitCode);
            Assert.IsFalse(run.TimedOut);
            Assert.AreEqual(TimeSpan.FromTicks(2050369), run.Duration);
            Assert.AreEqual("got the task\ndone\n", run.Output);
            Assert.AreEqual(new[] { "got the task", "done" }, run.OutputLines.ToArray());
            Assert.AreEqual(1, run.FileChanges.Count);
            Assert.AreEqual("create", run.FileChanges[0].Change);
            Assert.AreEqual("/workspace/agent.txt", run.FileChanges[0].Path);
            Assert.AreEqual(AgentEventKind.FileChange, run.FileChanges[0].Kind);
            Assert.AreEqual(new DateTimeOffset(2026, 12, 7, 7, 30, 6, 210, TimeSpan.Zero), run.Events[0].Time);
        }

        [Test]
        public async Task ACommandLineRunsUnderBashLcAndDefaultsSendNothingElse()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Lines.Started(1, "run_1"), Lines.Completed(2, 0)));
            var run = await t.Item1.Agent.RunAsync("claude -p", options: new AgentRunOptions { Timeout = TimeSpan.Zero });
            Assert.AreEqual(0, run.ExitCode);
            Assert.AreEqual("", run.Output);
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(@"{""command"": [""/bin/bash"", ""-lc"", ""claude -p""], ""prompt"": """"}"),
                t.Item2.Last.Json), t.Item2.Last.Body);
            Assert.AreEqual(new[] { "/bin/bash", "-lc", "x" }, Agent.Shell("x").ToArray());
        }

        [Test]
        public async Task ADroppedStreamIsFollowedAgainFromTheLastEventSeen()
        {
            var t = await Connected.To(s => s.Method == HttpMethod.Post
                ? Dropping(Lines.Started(1, "run/1"), Lines.Output(2, "a"))
                : FakeHandler.Lines(Lines.Wrap(Lines.Output(2, "a")), Lines.Wrap(Lines.Output(3, "b")), Lines.Wrap(Lines.Completed(4, 0))));
            var seen = new List<long>();
            var run = await t.Item1.Agent.RunAsync(new[] { "agent" }, "p", new AgentRunOptions { OnEvent = e => seen.Add(e.Seq) });
            Assert.AreEqual(new long[] { 1, 2, 3, 4 }, run.Events.Select(e => e.Seq).ToArray());
            Assert.AreEqual(new long[] { 1, 2, 3, 4 }, seen.ToArray()); // the replayed 2 is not repeated
            Assert.AreEqual("a\nb\n", run.Output);
            Assert.AreEqual(2, t.Item2.Requests.Count);
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/agent-runs/run%2F1:connect", bodiless: true);
            Assert.AreEqual(new[] { "2" }, t.Item2.Last.Query("afterSeq"));
        }

        [Test]
        public async Task ADropBeforeTheRunStartedIsNotResent()
        {
            var t = await Connected.To(s => Dropping());
            var e = await AssertAsync.Throws<UnavailableException>(() => t.Item1.Agent.RunAsync(new[] { "agent" }));
            StringAssert.Contains("broke off", e.Message);
            Assert.AreEqual(1, t.Item2.Requests.Count);
        }

        [Test]
        public async Task ReattachingGivesUpAfterItsTries()
        {
            var t = await Connected.To(s => s.Method == HttpMethod.Post ? Dropping(Lines.Started(1, "run_1")) : Dropping());
            var e = await AssertAsync.Throws<UnavailableException>(() =>
                t.Item1.Agent.RunAsync(new[] { "agent" }, "", new AgentRunOptions { Reattach = 2 }));
            StringAssert.Contains("lost agent run run_1 after 2 reattaches", e.Message);
            Assert.AreEqual(new[] { "POST", "GET", "GET" }, t.Item2.Requests.Select(r => r.Method.Method).ToArray());
            var none = await Connected.To(s => Dropping(Lines.Started(1, "run_1")));
            await AssertAsync.Throws<UnavailableException>(() =>
                none.Item1.Agent.RunAsync(new[] { "agent" }, "", new AgentRunOptions { Reattach = 0 }));
            Assert.AreEqual(1, none.Item2.Requests.Count);
        }

        [Test]
        public async Task AnErrorTheServerAnsweredIsRaisedNotReattached()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Lines.Started(1, "run_1"),
                new JObject { ["error"] = new JObject { ["code"] = 14, ["message"] = "worker lost" } }));
            var e = await AssertAsync.Throws<UnavailableException>(() => t.Item1.Agent.RunAsync(new[] { "agent" }));
            Assert.AreEqual("worker lost", e.Message);
            Assert.AreEqual(1, t.Item2.Requests.Count);
            var denied = await Connected.To(s => Answers.Error(403, 7, "role viewer may not call RunAgent"));
            await AssertAsync.Throws<PermissionDeniedException>(() => denied.Item1.Agent.RunAsync(new[] { "agent" }));
        }

        [Test]
        public async Task AStreamThatEndsWithoutCompletingIsAnError()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Lines.Started(1, "run_1"), Lines.Output(2, "x")));
            var e = await AssertAsync.Throws<TalonException>(() => t.Item1.Agent.RunAsync(new[] { "agent" }, "", new AgentRunOptions { Reattach = 0 }));
            StringAssert.Contains("run_1 ended without completing", e.Message);
        }

        [Test]
        public async Task ConnectReplaysTheEventsAfterASeq()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Lines.Wrap(Lines.Started(1, "run_1")), Lines.Wrap(Lines.Output(2, "a")),
                Lines.Wrap(Lines.Change(3, "FILE_EVENT_TYPE_WRITE", "/workspace/f")), Lines.Wrap(Lines.Completed(4, 137))));
            var seen = new List<AgentEvent>();
            var run = await t.Item1.Agent.ConnectAsync("run_1", 1, seen.Add);
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/agent-runs/run_1:connect", bodiless: true);
            Assert.AreEqual(new[] { "1" }, t.Item2.Last.Query("afterSeq"));
            // The server sends only what follows the cursor; one sent anyway is not counted twice.
            Assert.AreEqual(new long[] { 2, 3, 4 }, run.Events.Select(e => e.Seq).ToArray());
            Assert.AreEqual(run.Events, seen);
            Assert.AreEqual("run_1", run.RunId);
            Assert.AreEqual(137, run.ExitCode);
            Assert.AreEqual("write", run.FileChanges.Single().Change);
            await t.Item1.Agent.ConnectAsync("run_1");
            Assert.AreEqual(new[] { "0" }, t.Item2.Last.Query("afterSeq"));
        }

        [Test]
        public async Task AnUnknownRunIsNotFoundAndCancelPostsAnEmptyBody()
        {
            var t = await Connected.To(s => s.Uri.AbsolutePath.EndsWith(":cancel") ? FakeHandler.Json("{}") : Answers.Error(404, 5, "agent run nope not found"));
            var e = await AssertAsync.Throws<NotFoundException>(() => t.Item1.Agent.ConnectAsync("nope"));
            Assert.AreEqual(404, e.Status);
            await t.Item1.Agent.CancelAsync("run 1");
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/agent-runs/run%201:cancel");
            Assert.AreEqual("{}", t.Item2.Last.Body);
        }

        [Test]
        public async Task ArgumentsAreCheckedBeforeAnythingIsSent()
        {
            var t = await Connected.To(s => FakeHandler.Json("{}"));
            var agent = t.Item1.Agent;
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.RunAsync(new string[0]));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.RunAsync((IList<string>)null));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.RunAsync("x", "", new AgentRunOptions { Timeout = TimeSpan.FromSeconds(-1) }));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.RunAsync("x", "", new AgentRunOptions { Reattach = -1 }));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.StartAsync(new string[0]));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.ConnectAsync(""));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.ConnectAsync("run_1", -1));
            await AssertAsync.Throws<InvalidArgumentException>(() => agent.CancelAsync(null));
            // As faulted tasks, not thrown by the call itself.
            Assert.IsTrue(agent.StartAsync(new string[0]).IsFaulted);
            Assert.IsTrue(agent.CancelAsync("").IsFaulted);
            Assert.IsTrue(agent.ConnectAsync("").IsFaulted);
            Assert.AreEqual(0, t.Item2.Requests.Count);
            Assert.AreSame(agent, t.Item1.Agent);
        }

        [Test]
        public async Task StartReturnsOnceTheRunStartedAndTheHandleFollowsIt()
        {
            var cancelled = new TaskCompletionSource<bool>();
            var t = await Connected.To(s =>
            {
                if (s.Uri.AbsolutePath.EndsWith(":cancel"))
                {
                    cancelled.TrySetResult(true);
                    return FakeHandler.Json("{}");
                }
                // The end comes only after the cancel, as a real killed agent's would.
                return new HttpResponseMessage(HttpStatusCode.OK)
                {
                    Content = GatedLines.Content(Lines.Started(1, "run_9", 12), cancelled.Task, Lines.Output(2, "bye"), Lines.Completed(3, 137)),
                };
            });
            using (var h = await t.Item1.Agent.StartAsync("sleep 1000", "go"))
            {
                Assert.AreEqual("run_9", h.RunId);
                Assert.AreEqual(12, h.Pid);
                Assert.IsFalse(h.IsCompleted);
                Assert.AreEqual(new[] { AgentEventKind.Started }, h.Events.Select(e => e.Kind).ToArray());
                using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(100)))
                    await AssertAsync.Throws<OperationCanceledException>(() => h.WaitAsync(cts.Token));
                await h.CancelAsync();
                t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/agent-runs/run_9:cancel");
                var run = await h.WaitAsync();
                Assert.AreEqual(137, run.ExitCode);
                Assert.AreEqual("bye\n", run.Output);
                Assert.IsTrue(h.IsCompleted);
                Assert.AreEqual(3, h.Events.Count);
            }
        }

        [Test]
        public async Task AStartThatFailsRaisesAndADisconnectedHandleSaysSo()
        {
            var failing = await Connected.To(s => Answers.Error(400, 9, "sandbox is paused"));
            await AssertAsync.Throws<FailedPreconditionException>(() => failing.Item1.Agent.StartAsync("x"));
            var never = new TaskCompletionSource<bool>().Task;
            var t = await Connected.To(s => new HttpResponseMessage(HttpStatusCode.OK)
            {
                Content = GatedLines.Content(Lines.Started(1, "run_1"), never, Lines.Completed(2, 0)),
            });
            var h = await t.Item1.Agent.StartAsync("x");
            h.Disconnect();
            var e = await AssertAsync.Throws<TalonException>(() => h.WaitAsync());
            StringAssert.Contains("disconnected", e.Message);
        }

        [Test]
        public void EventsOfAKindThisSdkDoesNotKnowAreKept()
        {
            var e = AgentFollower.Parse("{\"seq\": \"6\", \"eventTime\": \"2026-01-02T03:04:05Z\", \"thinking\": {\"text\": \"hm\"}}");
            Assert.AreEqual(AgentEventKind.Unknown, e.Kind);
            Assert.AreEqual("unknown", e.KindName);
            Assert.AreEqual(6, e.Seq);
            Assert.AreEqual(new DateTimeOffset(2026, 1, 2, 3, 4, 5, TimeSpan.Zero), e.Time);
            var c = (AgentFileChangeEvent)AgentFollower.Parse("{\"event\": {\"seq\": \"1\", \"fileChange\": {\"kind\": \"FILE_EVENT_TYPE_UNSPECIFIED\"}}}");
            Assert.AreEqual("", c.Change);
            Assert.IsNull(c.Time);
            Assert.Throws<TalonException>(() => AgentFollower.Parse("not json"));
        }

        /// <summary>An NDJSON body that breaks off (a reset connection) after its lines.</summary>
        static HttpResponseMessage Dropping(params JObject[] lines) =>
            new HttpResponseMessage(HttpStatusCode.OK) { Content = new StreamContent(new AgentDroppingStream(lines)) };

        /// <summary>RunAgent's lines as the gateway frames them (ConnectAgentRun's inside {"event": …}).</summary>
        static class Lines
        {
            static JObject Event(long seq, string key, JObject body) => new JObject
            {
                ["eventTime"] = "2026-12-07T07:30:06.210Z",
                ["seq"] = seq.ToString(),
                [key] = body,
            };

            public static JObject Started(long seq, string runId, int pid = 7) =>
                Event(seq, "started", new JObject { ["pid"] = pid, ["runId"] = runId });

            public static JObject Output(long seq, string text, bool stderr = false) =>
                Event(seq, "output", new JObject { ["stream"] = stderr ? "OUTPUT_STREAM_STDERR" : "OUTPUT_STREAM_STDOUT", ["text"] = text });

            public static JObject Change(long seq, string kind, string path) =>
                Event(seq, "fileChange", new JObject { ["kind"] = kind, ["path"] = path });

            public static JObject Completed(long seq, int exitCode, bool timedOut = false, string duration = "1s") =>
                Event(seq, "completed", new JObject { ["duration"] = duration, ["exitCode"] = exitCode, ["timedOut"] = timedOut });

            public static JObject Wrap(JObject e) => new JObject { ["event"] = e };
        }
    }

    /// <summary>Lines, then the IOException of a connection reset: a stream that dropped.</summary>
    sealed class AgentDroppingStream : Stream
    {
        readonly MemoryStream _lines;

        public AgentDroppingStream(JObject[] lines)
        {
            _lines = new MemoryStream(Encoding.UTF8.GetBytes(string.Concat(lines.Select(l => l.ToString(Newtonsoft.Json.Formatting.None) + "\n"))));
        }

        public override int Read(byte[] buffer, int offset, int count)
        {
            var n = _lines.Read(buffer, offset, count);
            if (n == 0)
                throw new IOException("Connection reset by peer");
            return n;
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
            Task.FromResult(Read(buffer, offset, count));

        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
