using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>sbx.Commands and sbx.Files against canned gateway answers.</summary>
    [TestFixture]
    public class CommandFileTests
    {
        /// <summary>A sandbox whose process and file calls the route answers (GET of the sandbox is answered here).</summary>
        static async Task<Tuple<Sandbox, FakeHandler>> With(Func<Seen, System.Net.Http.HttpResponseMessage> route)
        {
            var fake = new FakeHandler(s => s.Method.Method == "GET" && s.Uri.AbsolutePath == "/v1/sandboxes/sbx-1"
                ? Answers.Wrapped(Answers.Sandbox()) : route(s));
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake)));
            fake.Requests.Clear();
            return Tuple.Create(sbx, fake);
        }

        [Test]
        public async Task RunGathersOutputAndSendsTheProcessBody()
        {
            var t = await With(s => FakeHandler.Lines(Answers.Started(42), Answers.Output("h", seq: 1), Answers.Output("i\n", seq: 2),
                Answers.Output("warn\n", stderr: true, seq: 3), Answers.Exited(0)));
            var chunks = new List<string>();
            var r = await t.Item1.Commands.RunAsync("echo hi", new CommandOptions
            {
                Envs = new Dictionary<string, string> { ["X"] = "1" },
                Cwd = "/tmp",
                User = "user",
                OnStdout = chunks.Add,
            });
            Assert.AreEqual("hi\n", r.Stdout);
            Assert.AreEqual("warn\n", r.Stderr);
            Assert.AreEqual(0, r.ExitCode);
            Assert.AreEqual(42, r.Pid);
            Assert.AreEqual(new[] { "h", "i\n" }, chunks.ToArray());
            var req = t.Item2.Last;
            Assert.AreEqual("/v1/sandboxes/sbx-1/processes", req.Uri.AbsolutePath);
            var expected = JObject.Parse(@"{""command"": [""sh"", ""-c"", ""echo hi""], ""stdin"": false, ""env"": {""X"": ""1""},
                ""cwd"": ""/tmp"", ""user"": ""user"", ""timeout"": ""60s""}");
            Assert.IsTrue(JToken.DeepEquals(expected, req.Json), req.Body);
        }

        [Test]
        public async Task ANonZeroExitRaisesWithTheResult()
        {
            var t = await With(s => FakeHandler.Lines(Answers.Started(1), Answers.Output("oops", stderr: true, seq: 1), Answers.Exited(2)));
            var e = await AssertAsync.Throws<CommandExitException>(() => t.Item1.Commands.RunAsync(new[] { "false" }));
            Assert.AreEqual(2, e.ExitCode);
            Assert.AreEqual("oops", e.Stderr);
            Assert.AreEqual(new JArray("false"), t.Item2.Last.Json["command"]);
        }

        [Test]
        public async Task ATimeoutKillsAndRaisesWithTheResultAndZeroMeansNoLimit()
        {
            var t = await With(s => FakeHandler.Lines(Answers.Started(1), Answers.Output("part", seq: 1), Answers.Exited(-1, timedOut: true, signal: 9)));
            var e = await AssertAsync.Throws<CommandTimeoutException>(() =>
                t.Item1.Commands.RunAsync("sleep 9", new CommandOptions { Timeout = TimeSpan.FromSeconds(2) }));
            Assert.AreEqual("part", e.Result.Stdout);
            Assert.AreEqual("2s", (string)t.Item2.Last.Json["timeout"]);
            await AssertAsync.Throws<CommandTimeoutException>(() =>
                t.Item1.Commands.RunAsync("sleep 9", new CommandOptions { Timeout = TimeSpan.Zero }));
            Assert.IsNull(t.Item2.Last.Json["timeout"]);
        }

        [Test]
        public async Task StdinIsSentAfterTheStartThenClosed()
        {
            var closed = new TaskCompletionSource<bool>();
            var t = await With(s =>
            {
                if (s.Uri.AbsolutePath.EndsWith("/processes"))
                {
                    // The exit comes only after stdin was closed, as a real cat's would.
                    var content = GatedLines.Content(Answers.Started(5), closed.Task, Answers.Output("in", seq: 1), Answers.Exited(0));
                    return new System.Net.Http.HttpResponseMessage(System.Net.HttpStatusCode.OK) { Content = content };
                }
                if (s.Uri.AbsolutePath.EndsWith(":closeStdin"))
                    closed.TrySetResult(true);
                return FakeHandler.Json("{}");
            });
            var r = await t.Item1.Commands.RunAsync("cat", new CommandOptions { Stdin = Encoding.UTF8.GetBytes("in") });
            Assert.AreEqual("in", r.Stdout);
            var paths = t.Item2.Requests.Select(q => q.Uri.AbsolutePath).ToArray();
            Assert.AreEqual(new[] { "/v1/sandboxes/sbx-1/processes", "/v1/sandboxes/sbx-1/processes/5:input", "/v1/sandboxes/sbx-1/processes/5:closeStdin" }, paths);
            Assert.AreEqual(true, (bool)t.Item2.Requests[0].Json["stdin"]);
            Assert.AreEqual("in", t.Item2.Requests[1].Body);
            Assert.AreEqual("application/octet-stream", t.Item2.Requests[1].ContentType);
        }

        [Test]
        public async Task CancellingStopsFollowingAStreamThatSaysNothing()
        {
            var never = new TaskCompletionSource<bool>().Task;
            var t = await With(s => new System.Net.Http.HttpResponseMessage(System.Net.HttpStatusCode.OK)
            {
                Content = GatedLines.Content(Answers.Started(3), never, Answers.Exited(0)),
            });
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200)))
                await AssertAsync.Throws<OperationCanceledException>(() => t.Item1.Commands.RunAsync("sleep 1000", null, cts.Token));
            var h = await t.Item1.Commands.StartAsync("sleep 1000");
            Assert.AreEqual(3, h.Pid);
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200)))
                await AssertAsync.Throws<OperationCanceledException>(() => h.WaitAsync(cts.Token));
            h.Disconnect();
            await AssertAsync.Throws<TalonException>(() => h.WaitAsync());
        }

        [Test]
        public async Task KillByPidOrTag()
        {
            var t = await With(s => FakeHandler.Json("{}"));
            await t.Item1.Commands.KillAsync(12);
            Assert.AreEqual("/v1/sandboxes/sbx-1/processes/12:signal", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual(9, (int)t.Item2.Last.Json["signal"]);
            await t.Item1.Commands.KillAsync(0, tag: "srv", signal: 15);
            Assert.AreEqual("/v1/sandboxes/sbx-1/processes/tags/srv:signal", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual(15, (int)t.Item2.Last.Json["signal"]);
        }

        [Test]
        public async Task FilesRoundTripAsRawBytes()
        {
            var stored = new Dictionary<string, byte[]>();
            var t = await With(s =>
            {
                var path = s.Query("path").FirstOrDefault();
                if (s.Uri.AbsolutePath.EndsWith("/files:write"))
                {
                    stored[path] = s.BodyBytes;
                    return FakeHandler.Json(new JObject
                    {
                        ["info"] = new JObject { ["path"] = "/workspace/" + path, ["name"] = path, ["type"] = "FILE_TYPE_FILE", ["size"] = s.BodyBytes.Length.ToString() },
                    });
                }
                if (s.Uri.AbsolutePath.EndsWith("/files:read"))
                    return stored.ContainsKey(path) ? FakeHandler.Bytes(stored[path]) : Answers.Error(404, 5, "no " + path);
                return FakeHandler.Json("{}");
            });
            var files = t.Item1.Files;
            var info = await files.WriteAsync("a.txt", "héllo", new WriteOptions { User = "user", Mode = 384 });
            Assert.AreEqual(6, info.Size);
            Assert.AreEqual(FileType.File, info.Type);
            var w = t.Item2.Last;
            Assert.AreEqual("application/octet-stream", w.ContentType);
            Assert.AreEqual(new[] { "true" }, w.Query("createParents"));
            Assert.AreEqual(new[] { "user" }, w.Query("user"));
            Assert.AreEqual(new[] { "384" }, w.Query("mode"));
            Assert.AreEqual("héllo", await files.ReadTextAsync("a.txt"));
            Assert.AreEqual("application/octet-stream", t.Item2.Last.Accept);
            var bin = Enumerable.Range(0, 256).Select(i => (byte)i).ToArray();
            await files.WriteAsync("b.bin", new MemoryStream(bin));
            CollectionAssert.AreEqual(bin, await files.ReadBytesAsync("b.bin"));
            using (var stream = await files.OpenReadAsync("b.bin"))
            using (var copy = new MemoryStream())
            {
                await stream.CopyToAsync(copy);
                CollectionAssert.AreEqual(bin, copy.ToArray());
            }
            var infos = await files.WriteFilesAsync(new[] { new WriteEntry("c", "1"), new WriteEntry("d", new byte[] { 2 }) });
            Assert.AreEqual(new[] { "/workspace/c", "/workspace/d" }, infos.Select(i => i.Path).ToArray());
            await AssertAsync.Throws<NotFoundException>(() => files.ReadTextAsync("missing"));
        }

        [Test]
        public async Task ListStatExistsMakeDirRenameRemove()
        {
            var t = await With(s =>
            {
                var p = s.Uri.AbsolutePath;
                if (p.EndsWith("/files:list"))
                    return FakeHandler.Json(new JObject
                    {
                        ["entries"] = new JArray(
                            new JObject { ["path"] = "/workspace/d", ["name"] = "d", ["type"] = "FILE_TYPE_DIRECTORY", ["mode"] = 493 },
                            new JObject { ["path"] = "/workspace/l", ["name"] = "l", ["type"] = "FILE_TYPE_SYMLINK", ["symlinkTarget"] = "d" }),
                    });
                if (p.EndsWith("/files:stat"))
                    return s.Query("path")[0] == "here"
                        ? FakeHandler.Json("{\"info\": {\"path\": \"/workspace/here\", \"type\": \"FILE_TYPE_FILE\", \"size\": \"3\", \"modifyTime\": \"2025-01-01T00:00:00Z\"}}")
                        : Answers.Error(404, 5, "no such file");
                return FakeHandler.Json("{}");
            });
            var files = t.Item1.Files;
            var list = await files.ListAsync("/workspace", depth: 2, user: "user");
            Assert.AreEqual(new[] { FileType.Dir, FileType.Symlink }, list.Select(e => e.Type).ToArray());
            Assert.IsTrue(list[0].IsDir);
            Assert.AreEqual(493, list[0].Mode);
            Assert.AreEqual("d", list[1].SymlinkTarget);
            Assert.AreEqual(new[] { "2" }, t.Item2.Last.Query("depth"));
            Assert.AreEqual(new[] { "user" }, t.Item2.Last.Query("user"));
            var st = await files.StatAsync("here");
            Assert.AreEqual(3, st.Size);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 1, 0, 0, 0, TimeSpan.Zero), st.ModifiedTime);
            Assert.IsTrue(await files.ExistsAsync("here"));
            Assert.IsFalse(await files.ExistsAsync("gone"));
            await files.MakeDirAsync("x/y");
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse("{\"path\": \"x/y\", \"parents\": true}"), t.Item2.Last.Json), t.Item2.Last.Body);
            await files.RenameAsync("a", "b", user: "user");
            Assert.AreEqual("/v1/sandboxes/sbx-1/files:move", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual("a", (string)t.Item2.Last.Json["sourcePath"]);
            Assert.AreEqual("b", (string)t.Item2.Last.Json["destinationPath"]);
            await files.RemoveAsync("x", recursive: true);
            Assert.AreEqual("DELETE", t.Item2.Last.Method.Method);
            Assert.AreEqual(new[] { "true" }, t.Item2.Last.Query("recursive"));
            await AssertAsync.Throws<InvalidArgumentException>(() => files.RemoveAsync(""));
        }

        [Test]
        public async Task BackgroundCommandsAreFollowedAndReattached()
        {
            var t = await With(s => FakeHandler.Lines(Answers.Started(9), Answers.Output("a", seq: 1), Answers.Output("b", seq: 2), Answers.Exited(0)));
            var h = await t.Item1.Commands.StartAsync("server", new CommandOptions { Tag = "srv" });
            Assert.AreEqual(9, h.Pid);
            var r = await h.WaitAsync();
            Assert.AreEqual("ab", r.Stdout);
            Assert.IsNull(t.Item2.Last.Json["timeout"]);
            Assert.AreEqual("srv", (string)t.Item2.Last.Json["tag"]);
            var again = await t.Item1.Commands.ConnectAsync(9);
            Assert.AreEqual("ab", (await again.WaitAsync()).Stdout);
            Assert.AreEqual("/v1/sandboxes/sbx-1/processes/9:connect", t.Item2.Last.Uri.AbsolutePath);
        }
    }

    /// <summary>
    /// An NDJSON body whose later lines wait for a task: a process that
    /// reacts to its stdin. A stream, not an HttpContent of its own, since
    /// HttpContent would buffer the whole body before the SDK saw a line.
    /// </summary>
    sealed class GatedLines : Stream
    {
        readonly byte[] _first;
        readonly Task _gate;
        readonly byte[] _rest;
        readonly TaskCompletionSource<bool> _disposed = new TaskCompletionSource<bool>();
        MemoryStream _now;
        bool _opened;

        GatedLines(JObject first, Task gate, JObject[] rest)
        {
            _first = Line(first);
            _gate = gate;
            _rest = rest.SelectMany(Line).ToArray();
            _now = new MemoryStream(_first);
        }

        public static System.Net.Http.HttpContent Content(JObject first, Task gate, params JObject[] rest) =>
            new System.Net.Http.StreamContent(new GatedLines(first, gate, rest));

        static byte[] Line(JObject l) => Encoding.UTF8.GetBytes(l.ToString(Newtonsoft.Json.Formatting.None) + "\n");

        public override async Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        {
            var n = _now.Read(buffer, offset, count);
            if (n > 0 || _opened)
                return n;
            // As a network stream: disposing it (how the SDK cancels) ends a pending read.
            await Task.WhenAny(_gate, _disposed.Task);
            if (_disposed.Task.IsCompleted)
                throw new ObjectDisposedException(nameof(GatedLines));
            _opened = true;
            _now = new MemoryStream(_rest);
            return _now.Read(buffer, offset, count);
        }

        public override int Read(byte[] buffer, int offset, int count) => ReadAsync(buffer, offset, count, CancellationToken.None).Result;
        public override bool CanRead => true;
        public override bool CanSeek => false;
        public override bool CanWrite => false;
        public override long Length => throw new NotSupportedException();
        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }
        public override void Flush() { }
        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();
        public override void SetLength(long value) => throw new NotSupportedException();
        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            _disposed.TrySetResult(true);
            base.Dispose(disposing);
        }
    }
}
