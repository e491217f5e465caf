using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Net.WebSockets;
using System.Security.Cryptography;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// Terminals over a scripted WebSocket (the frames the gateway's bridge
    /// sends and expects, gateway-rest/src/ws.rs), their REST calls over the
    /// fake handler, and once the SDK's real ClientWebSocket against a
    /// minimal WebSocket server on a local port.
    /// </summary>
    [TestFixture]
    public class PtyTests
    {
        static void AssertJson(string expected, string actual) =>
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(expected), JObject.Parse(actual)), "sent: " + actual);

        /// <summary>A sandbox over the fake gateway whose terminals open the scripted socket (recording the URL).</summary>
        static async Task<Tuple<Sandbox, FakeHandler, List<Uri>>> With(ScriptedSocket socket, Func<Seen, System.Net.Http.HttpResponseMessage> route = null,
            string urls = "http://a.test:8080")
        {
            var t = await Connected.To(route ?? (s => FakeHandler.Json("{}")), urls);
            var opened = new List<Uri>();
            t.Item1.Pty.OpenSocket = (url, ct) =>
            {
                opened.Add(url);
                return Task.FromResult<WebSocket>(socket);
            };
            return Tuple.Create(t.Item1, t.Item2, opened);
        }

        [Test]
        public async Task CreateSendsTheOpenThenTypesResizesAndGathersOutputToTheExit()
        {
            var ws = ScriptedSocket.Starting(7);
            var t = await With(ws);
            var chunks = new List<string>();
            var p = await t.Item1.Pty.CreateAsync(new PtyOptions
            {
                Cmd = new[] { "sh" },
                Cols = 100,
                Rows = 40,
                Envs = new Dictionary<string, string> { ["A"] = "1" },
                Cwd = "/tmp",
                User = "user",
                Tag = "term",
                OnData = b => { lock (chunks) chunks.Add(Encoding.UTF8.GetString(b)); },
            });
            Assert.AreEqual(7, p.Pid);
            Assert.AreEqual("term", p.Tag);
            Assert.AreEqual(new[] { new Uri("ws://a.test:8080/v1/sandboxes/sbx-1/pty") }, t.Item3.ToArray());
            AssertJson(@"{""open"": {""command"": {""command"": [""sh""], ""env"": {""A"": ""1""}, ""cwd"": ""/tmp"", ""user"": ""user"", ""tag"": ""term""},
                ""size"": {""cols"": 100, ""rows"": 40}}}", ws.SentText(0));
            Assert.AreEqual(WebSocketMessageType.Text, ws.Sent[0].Item1);

            await p.SendInputAsync("echo hi\n");
            await p.SendInputAsync(new byte[] { 3 });
            await p.SendInputAsync("");
            await p.ResizeAsync(120, 50);
            Assert.AreEqual(WebSocketMessageType.Binary, ws.Sent[1].Item1);
            Assert.AreEqual("echo hi\n", ws.SentText(1));
            CollectionAssert.AreEqual(new byte[] { 3 }, ws.Sent[2].Item2);
            AssertJson(@"{""resize"": {""cols"": 120, ""rows"": 50}}", ws.SentText(3));
            Assert.AreEqual(4, ws.Sent.Count, "empty input sends nothing");

            ws.PushBinary("echo hi\r\n");
            ws.PushText(@"{""output"": """ + Convert.ToBase64String(Encoding.UTF8.GetBytes("hi\r\n")) + @"""}");
            ws.PushText(@"{""exited"": {""exitCode"": 0, ""signal"": 0, ""timedOut"": false, ""endTime"": ""2025-01-01T00:00:00Z""}}");
            ws.PushClose(WebSocketCloseStatus.NormalClosure);
            var r = await p.WaitAsync();
            Assert.AreEqual(0, r.ExitCode);
            Assert.AreEqual(7, r.Pid);
            Assert.AreEqual("echo hi\r\nhi\r\n", r.Stdout);
            Assert.AreEqual("", r.Stderr);
            Assert.AreEqual("echo hi\r\nhi\r\n", p.Output);
            Assert.IsTrue(p.HasExited);
            lock (chunks)
                Assert.AreEqual(new[] { "echo hi\r\n", "hi\r\n" }, chunks.ToArray());
            await ws.Closed(); // our close frame answers the server's
            await AssertAsync.Throws<FailedPreconditionException>(() => p.SendInputAsync("late\n"));
            p.Dispose();
            Assert.AreEqual(0, t.Item2.Requests.Count, "a terminal's life is all on its socket");
        }

        [Test]
        public async Task TheDefaultIsALoginBashAndAttachesNameTheProcessAndSize()
        {
            var ws = ScriptedSocket.Starting(3);
            var t = await With(ws);
            using (await t.Item1.Pty.CreateAsync())
                AssertJson(@"{""open"": {""command"": {""command"": [""bash"", ""-l""]}, ""size"": {""cols"": 80, ""rows"": 24}}}", ws.SentText(0));

            var byPid = ScriptedSocket.Starting(12);
            t.Item1.Pty.OpenSocket = (u, c) => Task.FromResult<WebSocket>(byPid);
            using (var h = await t.Item1.Pty.ConnectAsync(12, cols: 132, rows: 43))
                Assert.AreEqual(12, h.Pid);
            AssertJson(@"{""open"": {""process"": {""pid"": 12}, ""size"": {""cols"": 132, ""rows"": 43}}}", byPid.SentText(0));

            var byTag = ScriptedSocket.Starting(13);
            t.Item1.Pty.OpenSocket = (u, c) => Task.FromResult<WebSocket>(byTag);
            using (var h = await t.Item1.Pty.ConnectAsync(0, tag: "term"))
                Assert.AreEqual(13, h.Pid);
            AssertJson(@"{""open"": {""process"": {""tag"": ""term""}, ""size"": {""cols"": 80, ""rows"": 24}}}", byTag.SentText(0));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Pty.ConnectAsync(0));
        }

        [Test]
        public async Task ASizeOutOfRangeIsRefusedBeforeAnythingIsSent()
        {
            var ws = ScriptedSocket.Starting(1);
            var t = await With(ws);
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Pty.CreateAsync(new PtyOptions { Cols = 0 }));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Pty.CreateAsync(new PtyOptions { Rows = 70000 }));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Pty.ResizeAsync(1, 80, -1));
            Assert.AreEqual(0, t.Item3.Count);
            Assert.AreEqual(0, t.Item2.Requests.Count);
            using (var p = await t.Item1.Pty.CreateAsync())
                await AssertAsync.Throws<InvalidArgumentException>(() => p.ResizeAsync(0, 10));
        }

        [Test]
        public async Task AnErrorFrameBeforeThePidIsTheCreatesTypedError()
        {
            var cases = new[]
            {
                Tuple.Create(5, typeof(NotFoundException)),
                Tuple.Create(9, typeof(FailedPreconditionException)),
                Tuple.Create(16, typeof(AuthenticationException)),
                Tuple.Create(7, typeof(PermissionDeniedException)),
            };
            foreach (var c in cases)
            {
                var ws = new ScriptedSocket();
                ws.OnOpen = () =>
                {
                    ws.PushText(@"{""error"": {""code"": " + c.Item1 + @", ""message"": ""no"", ""details"": []}}");
                    ws.PushClose(WebSocketCloseStatus.InternalServerError, "no");
                };
                var t = await With(ws);
                var e = await AssertAsync.Throws<TalonException>(() => t.Item1.Pty.CreateAsync());
                Assert.AreEqual(c.Item2, e.GetType());
                Assert.AreEqual("no", e.Message);
                await ws.Closed();
            }
            // A server that refuses before it reads the open (a key it does
            // not take) has dropped the connection by the time the open is
            // sent: its reason still wins over the failed send.
            var early = new ScriptedSocket { FailSends = true };
            early.PushText(@"{""error"": {""code"": 16, ""message"": ""invalid token"", ""details"": []}}");
            early.PushClose(WebSocketCloseStatus.InternalServerError, "invalid token");
            var a = await With(early);
            Assert.AreEqual("invalid token", (await AssertAsync.Throws<AuthenticationException>(() => a.Item1.Pty.CreateAsync())).Message);
        }

        [Test]
        public async Task ANonZeroExitOrASignalRaisesWithTheResult()
        {
            var ws = ScriptedSocket.Starting(4);
            var t = await With(ws);
            var p = await t.Item1.Pty.CreateAsync();
            ws.PushBinary("bye\r\n");
            ws.PushText(@"{""exited"": {""exitCode"": 3}}");
            var e = await AssertAsync.Throws<CommandExitException>(() => p.WaitAsync());
            Assert.AreEqual(3, e.ExitCode);
            Assert.AreEqual("bye\r\n", e.Stdout);

            ws = ScriptedSocket.Starting(5);
            t = await With(ws);
            p = await t.Item1.Pty.CreateAsync();
            ws.PushText(@"{""exited"": {""exitCode"": -1, ""signal"": 9}}");
            e = await AssertAsync.Throws<CommandExitException>(() => p.WaitAsync());
            Assert.AreEqual(9, e.Result.Signal);
            Assert.AreEqual(-1, e.ExitCode);
        }

        [Test]
        public async Task AConnectionThatEndsBeforeTheExitIsAnError()
        {
            var ws = ScriptedSocket.Starting(4);
            var p = await (await With(ws)).Item1.Pty.CreateAsync();
            ws.PushClose(WebSocketCloseStatus.NormalClosure);
            var e = await AssertAsync.Throws<UnavailableException>(() => p.WaitAsync());
            StringAssert.Contains("Pty.ConnectAsync", e.Message);

            ws = ScriptedSocket.Starting(4);
            p = await (await With(ws)).Item1.Pty.CreateAsync();
            ws.PushClose(WebSocketCloseStatus.InternalServerError, "worker gone");
            StringAssert.Contains("worker gone", (await AssertAsync.Throws<InternalException>(() => p.WaitAsync())).Message);

            ws = ScriptedSocket.Starting(4);
            p = await (await With(ws)).Item1.Pty.CreateAsync();
            ws.Break();
            await AssertAsync.Throws<UnavailableException>(() => p.WaitAsync());
            await AssertAsync.Throws<UnavailableException>(() => p.SendInputAsync("x"));
        }

        [Test]
        public async Task DisposingClosesTheSocketAndLeavesTheProcessRunning()
        {
            var ws = ScriptedSocket.Starting(8);
            var t = await With(ws);
            var p = await t.Item1.Pty.CreateAsync();
            p.Dispose();
            await ws.Closed();
            Assert.AreEqual(WebSocketCloseStatus.NormalClosure, ws.ClosedWith);
            Assert.AreEqual(0, t.Item2.Requests.Count, "no kill was sent");
            StringAssert.Contains("disconnected", (await AssertAsync.Throws<TalonException>(() => p.WaitAsync())).Message);
            StringAssert.Contains("disconnected", (await AssertAsync.Throws<TalonException>(() => p.SendInputAsync("x"))).Message);
            p.Dispose();
        }

        [Test]
        public async Task KillResizeAndInputByPidGoOverRest()
        {
            var ws = ScriptedSocket.Starting(9);
            var t = await With(ws);
            var pty = t.Item1.Pty;
            using (var p = await pty.CreateAsync())
            {
                await p.KillAsync();
                t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/processes/9:signal");
                AssertJson(@"{""signal"": 9}", t.Item2.Last.Body);
            }
            await pty.KillAsync(9, 15);
            AssertJson(@"{""signal"": 15}", t.Item2.Last.Body);
            await pty.ResizeAsync(9, 100, 30);
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/processes/9:resize");
            AssertJson(@"{""size"": {""cols"": 100, ""rows"": 30}}", t.Item2.Last.Body);
            await pty.SendInputAsync(9, "ls\n");
            t.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/processes/9:input");
            Assert.AreEqual("ls\n", t.Item2.Last.Body);
            Assert.AreEqual("application/octet-stream", t.Item2.Last.ContentType);
        }

        [Test]
        public async Task RunTypesTheInputAndWaitsAndItsTimeoutKills()
        {
            var ws = ScriptedSocket.Starting(6);
            ws.OnBinary = data =>
            {
                ws.PushBinary(Encoding.UTF8.GetString(data).Replace("\n", "\r\n") + "42\r\n");
                ws.PushText(@"{""exited"": {""exitCode"": 0}}");
                ws.PushClose(WebSocketCloseStatus.NormalClosure);
            };
            var t = await With(ws);
            var r = await t.Item1.Pty.RunAsync("echo $((6*7))\nexit\n", new PtyOptions { Cmd = new[] { "sh" } });
            Assert.AreEqual("echo $((6*7))\r\nexit\r\n42\r\n", r.Stdout);
            Assert.AreEqual(0, r.ExitCode);

            // A terminal that never ends is killed when the SDK's timeout passes.
            var stuck = ScriptedSocket.Starting(11);
            var s = await With(stuck, q =>
            {
                if (q.Uri.AbsolutePath.EndsWith(":signal"))
                    stuck.PushText(@"{""exited"": {""exitCode"": -1, ""signal"": 9}}");
                return FakeHandler.Json("{}");
            });
            var e = await AssertAsync.Throws<CommandTimeoutException>(() =>
                s.Item1.Pty.RunAsync("", new PtyOptions { Timeout = TimeSpan.FromMilliseconds(200) }));
            Assert.IsTrue(e.Result.TimedOut);
            Assert.AreEqual(9, e.Result.Signal);
            s.Item2.AssertLast("POST", "/v1/sandboxes/sbx-1/processes/11:signal");
            await stuck.Closed();
        }

        [Test]
        public async Task NoPidWithinTheRequestTimeoutAndCancellingAreTheUsualErrors()
        {
            var silent = new ScriptedSocket();
            var fake = new FakeHandler(s => Answers.Wrapped(Answers.Sandbox()));
            var o = Opt.Over(fake);
            o.RequestTimeout = TimeSpan.FromMilliseconds(300);
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(o));
            sbx.Pty.OpenSocket = (u, c) => Task.FromResult<WebSocket>(silent);
            await AssertAsync.Throws<TalonTimeoutException>(() => sbx.Pty.CreateAsync());
            await silent.Closed();

            var never = new TaskCompletionSource<WebSocket>();
            sbx.Pty.OpenSocket = (u, c) =>
            {
                c.Register(() => never.TrySetCanceled());
                return never.Task;
            };
            await AssertAsync.Throws<TalonTimeoutException>(() => sbx.Pty.CreateAsync());

            var quiet = new ScriptedSocket();
            var t = await With(quiet);
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200)))
                await AssertAsync.Throws<OperationCanceledException>(() => t.Item1.Pty.CreateAsync(null, cts.Token));
            var started = ScriptedSocket.Starting(2);
            t.Item1.Pty.OpenSocket = (u, c) => Task.FromResult<WebSocket>(started);
            using (var p = await t.Item1.Pty.CreateAsync())
            using (var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(200)))
            {
                await AssertAsync.Throws<OperationCanceledException>(() => p.WaitAsync(cts.Token));
                Assert.IsFalse(p.HasExited);
            }
        }

        [Test]
        public async Task AFailedUpgradeIsAskedAboutOverHttp()
        {
            // The route answers a plain GET with 400 (it wants a WebSocket): the upgrade itself failed.
            var t = await Connected.To(s => Answers.Error(400, 3, "this is a bidirectional stream: open it as a WebSocket"));
            t.Item1.Pty.OpenSocket = (u, c) => { throw new WebSocketException("Unable to connect to the remote server"); };
            var e = await AssertAsync.Throws<UnavailableException>(() => t.Item1.Pty.CreateAsync());
            StringAssert.Contains("Unable to connect", e.Message);
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/pty", bodiless: true);
            Assert.AreEqual("Bearer key-1", t.Item2.Last.Authorization);

            // A gateway without the route, or one that is down, is that error.
            var old = await Connected.To(s => Answers.Error(404, 5, "no route for GET /v1/sandboxes/sbx-1/pty"));
            old.Item1.Pty.OpenSocket = (u, c) => { throw new WebSocketException("Unable to connect to the remote server"); };
            await AssertAsync.Throws<NotFoundException>(() => old.Item1.Pty.CreateAsync());
            var down = await Connected.To(s => { throw FakeHandler.Refused(); });
            down.Item1.Pty.OpenSocket = (u, c) => { throw new WebSocketException("Unable to connect to the remote server"); };
            await AssertAsync.Throws<UnavailableException>(() => down.Item1.Pty.CreateAsync());
        }

        [Test]
        public async Task ADeadFirstServerMovesTheSocketToTheNext()
        {
            var ws = ScriptedSocket.Starting(21);
            var t = await Connected.To(s =>
            {
                if (s.Uri.Host == "a.test")
                    throw FakeHandler.Refused();
                return Answers.Error(400, 3, "open it as a WebSocket");
            }, "http://a.test:8080,http://b.test:9090/base");
            var opened = new List<Uri>();
            t.Item1.Pty.OpenSocket = (u, c) =>
            {
                opened.Add(u);
                if (u.Host == "a.test")
                    throw new WebSocketException("Unable to connect to the remote server");
                return Task.FromResult<WebSocket>(ws);
            };
            using (var p = await t.Item1.Pty.CreateAsync())
                Assert.AreEqual(21, p.Pid);
            Assert.AreEqual(new[] { new Uri("ws://a.test:8080/v1/sandboxes/sbx-1/pty"), new Uri("ws://b.test:9090/base/v1/sandboxes/sbx-1/pty") },
                opened.ToArray());
        }

        [Test]
        public void WireFramesAndAddresses()
        {
            Assert.AreEqual(new Uri("wss://h.example/x/v1/sandboxes/s/pty"), PtyWire.SocketUrl(new Uri("https://h.example/x/"), "/v1/sandboxes/s/pty"));
            Assert.AreEqual(new Uri("ws://127.0.0.1:8080/v1/sandboxes/s/pty"), PtyWire.SocketUrl(new Uri("http://127.0.0.1:8080"), "/v1/sandboxes/s/pty"));
            var pid = PtyWire.Parse(@"{""pid"": 42}");
            Assert.AreEqual(ProcessEvent.Kinds.Started, pid.Kind);
            Assert.AreEqual(42, pid.Pid);
            var x = PtyWire.Parse(@"{""exited"": {""exitCode"": 2, ""signal"": 0, ""timedOut"": true}}");
            Assert.AreEqual(ProcessEvent.Kinds.Exited, x.Kind);
            Assert.AreEqual(2, x.ExitCode);
            Assert.IsTrue(x.TimedOut);
            Assert.AreEqual(ProcessEvent.Kinds.Exited, PtyWire.Parse(@"{""exited"": {}}").Kind);
            Assert.AreEqual(0, PtyWire.Parse(@"{""exited"": {}}").ExitCode);
            CollectionAssert.AreEqual(new byte[] { 1, 2 }, PtyWire.Parse(@"{""output"": ""AQI=""}").Data);
            Assert.AreEqual(ProcessEvent.Kinds.Unknown, PtyWire.Parse(@"{""somethingNew"": 1}").Kind);
            var e = Assert.Throws<RateLimitException>(() => PtyWire.Parse(@"{""error"": {""code"": 8, ""message"": ""slow""}}"));
            Assert.AreEqual("slow", e.Message);
            Assert.Throws<TalonException>(() => PtyWire.Parse("not json"));
            AssertJson(@"{""resize"": {""cols"": 1, ""rows"": 65535}}", PtyWire.Resize(1, 65535));
            Assert.IsInstanceOf<UnavailableException>(PtyWire.ClosedEarly(WebSocketCloseStatus.PolicyViolation, "bad frame"));
            StringAssert.Contains("1008: bad frame", PtyWire.ClosedEarly(WebSocketCloseStatus.PolicyViolation, "bad frame").Message);
            StringAssert.Contains("code none", PtyWire.ClosedEarly(null, null).Message);
        }

        [Test]
        public async Task FragmentsAreJoinedIntoOneMessage()
        {
            var ws = ScriptedSocket.Starting(5);
            var p = await (await With(ws)).Item1.Pty.CreateAsync();
            var big = Enumerable.Range(0, 40000).Select(i => (byte)('a' + i % 26)).ToArray();
            ws.PushBinary(big); // more than the reader's 16 KiB buffer: three reads
            ws.PushFragments(WebSocketMessageType.Text, @"{""exi", @"ted"": {""exitC", @"ode"": 0}}");
            var r = await p.WaitAsync();
            CollectionAssert.AreEqual(big, r.StdoutBytes);
            CollectionAssert.AreEqual(big, p.OutputBytes);
        }

        [Test]
        public async Task TheRealSocketSendsTheKeyAsABearerHeader()
        {
            using (var server = new MiniWebSocketServer())
            {
                var t = await Connected.To(s => FakeHandler.Json("{}"), "http://127.0.0.1:" + server.Port);
                var talk = server.Serve(async conn =>
                {
                    var open = await conn.ReadFrame();
                    lock (conn.Texts)
                        conn.Texts.Add(Encoding.UTF8.GetString(open.Item2));
                    await conn.Write(1, @"{""pid"": 31}");
                    var input = await conn.ReadFrame();
                    Assert.AreEqual(2, input.Item1, "input is a binary frame");
                    await conn.Write(2, "you said " + Encoding.UTF8.GetString(input.Item2));
                    await conn.Write(1, @"{""exited"": {""exitCode"": 0}}");
                    await conn.WriteClose(1000);
                    var close = await conn.ReadFrame();
                    Assert.AreEqual(8, close.Item1, "the client answers the close");
                });
                using (var p = await t.Item1.Pty.CreateAsync(new PtyOptions { Cmd = new[] { "cat" } }))
                {
                    Assert.AreEqual(31, p.Pid);
                    await p.SendInputAsync("hi");
                    var r = await p.WaitAsync();
                    Assert.AreEqual("you said hi", r.Stdout);
                }
                await talk;
                var req = server.Request;
                StringAssert.StartsWith("GET /v1/sandboxes/sbx-1/pty HTTP/1.1\r\n", req);
                StringAssert.Contains("\r\nAuthorization: Bearer key-1\r\n", req);
                StringAssert.Contains("\r\nUser-Agent: " + "talon-sdk-dotnet/", req);
                StringAssert.DoesNotContain("Sec-WebSocket-Protocol", req, "the key is not in the protocol list");
                AssertJson(@"{""open"": {""command"": {""command"": [""cat""]}, ""size"": {""cols"": 80, ""rows"": 24}}}", server.Texts[0]);
            }
        }
    }

    /// <summary>
    /// A WebSocket whose server side is a script: frames pushed by the test
    /// are received in order (split to the reader's buffer, as a real
    /// socket does), and what the SDK sends is recorded.
    /// </summary>
    sealed class ScriptedSocket : WebSocket
    {
        sealed class Item
        {
            public WebSocketMessageType Type;
            public byte[] Data = new byte[0];
            public bool End = true;
            public WebSocketCloseStatus? Status;
            public string Reason;
            public bool Broken;
        }

        readonly object _lock = new object();
        readonly Queue<Item> _items = new Queue<Item>();
        readonly SemaphoreSlim _ready = new SemaphoreSlim(0);
        readonly TaskCompletionSource<bool> _closed = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
        WebSocketState _state = WebSocketState.Open;
        WebSocketCloseStatus? _status;
        string _reason;
        Item _partial;
        int _offset;

        public readonly List<Tuple<WebSocketMessageType, byte[]>> Sent = new List<Tuple<WebSocketMessageType, byte[]>>();
        /// <summary>Called on the first text frame (the open), as the server answers it.</summary>
        public Action OnOpen;
        public Action<byte[]> OnBinary;
        public WebSocketCloseStatus? ClosedWith;
        /// <summary>Sends fail, as on a connection the server already dropped.</summary>
        public bool FailSends;

        /// <summary>A socket whose server answers the open with the pid.</summary>
        public static ScriptedSocket Starting(int pid)
        {
            var ws = new ScriptedSocket();
            ws.OnOpen = () => ws.PushText("{\"pid\": " + pid + "}");
            return ws;
        }

        public string SentText(int i) { lock (_lock) return Encoding.UTF8.GetString(Sent[i].Item2); }

        public void PushText(string s) => Push(new Item { Type = WebSocketMessageType.Text, Data = Encoding.UTF8.GetBytes(s) });
        public void PushBinary(string s) => PushBinary(Encoding.UTF8.GetBytes(s));
        public void PushBinary(byte[] b) => Push(new Item { Type = WebSocketMessageType.Binary, Data = b });
        public void PushClose(WebSocketCloseStatus status, string reason = "") =>
            Push(new Item { Type = WebSocketMessageType.Close, Status = status, Reason = reason });
        /// <summary>The connection drops: the pending receive fails.</summary>
        public void Break() => Push(new Item { Broken = true });

        public void PushFragments(WebSocketMessageType type, params string[] parts)
        {
            for (var i = 0; i < parts.Length; i++)
                Push(new Item { Type = type, Data = Encoding.UTF8.GetBytes(parts[i]), End = i == parts.Length - 1 });
        }

        void Push(Item i)
        {
            lock (_lock)
                _items.Enqueue(i);
            _ready.Release();
        }

        /// <summary>Waits (5 s at most) until the SDK closed its side or dropped the socket.</summary>
        public async Task Closed()
        {
            if (await Task.WhenAny(_closed.Task, Task.Delay(5000)) != _closed.Task)
                Assert.Fail("the SDK did not close the socket");
        }

        public override async Task<WebSocketReceiveResult> ReceiveAsync(ArraySegment<byte> buffer, CancellationToken cancellationToken)
        {
            Item item;
            lock (_lock)
                item = _partial;
            if (item == null)
            {
                try
                {
                    await _ready.WaitAsync(cancellationToken);
                }
                catch (OperationCanceledException)
                {
                    _state = WebSocketState.Aborted; // as ClientWebSocket: a cancelled receive aborts
                    throw;
                }
                lock (_lock)
                {
                    item = _items.Dequeue();
                    _offset = 0;
                }
            }
            if (item.Broken)
            {
                _state = WebSocketState.Aborted;
                throw new WebSocketException("the connection was reset");
            }
            if (item.Type == WebSocketMessageType.Close)
            {
                _status = item.Status;
                _reason = item.Reason;
                _state = _state == WebSocketState.CloseSent ? WebSocketState.Closed : WebSocketState.CloseReceived;
                return new WebSocketReceiveResult(0, WebSocketMessageType.Close, true, item.Status, item.Reason);
            }
            var n = Math.Min(buffer.Count, item.Data.Length - _offset);
            Buffer.BlockCopy(item.Data, _offset, buffer.Array, buffer.Offset, n);
            _offset += n;
            var whole = _offset == item.Data.Length;
            lock (_lock)
                _partial = whole ? null : item;
            return new WebSocketReceiveResult(n, item.Type, whole && item.End);
        }

        public override Task SendAsync(ArraySegment<byte> buffer, WebSocketMessageType messageType, bool endOfMessage, CancellationToken cancellationToken)
        {
            if (FailSends || (_state != WebSocketState.Open && _state != WebSocketState.CloseReceived))
                throw new WebSocketException("the socket is " + (FailSends ? "gone" : _state.ToString()));
            var data = buffer.Skip(0).ToArray();
            bool first;
            lock (_lock)
            {
                first = Sent.Count == 0;
                Sent.Add(Tuple.Create(messageType, data));
            }
            if (first && OnOpen != null)
                OnOpen();
            if (messageType == WebSocketMessageType.Binary && OnBinary != null)
                OnBinary(data);
            return Task.FromResult(true);
        }

        public override Task CloseOutputAsync(WebSocketCloseStatus closeStatus, string statusDescription, CancellationToken cancellationToken)
        {
            ClosedWith = closeStatus;
            _state = _state == WebSocketState.CloseReceived ? WebSocketState.Closed : WebSocketState.CloseSent;
            _closed.TrySetResult(true);
            return Task.FromResult(true);
        }

        public override Task CloseAsync(WebSocketCloseStatus closeStatus, string statusDescription, CancellationToken cancellationToken) =>
            CloseOutputAsync(closeStatus, statusDescription, cancellationToken);

        public override void Abort() => Dispose();

        public override void Dispose()
        {
            if (_state != WebSocketState.Closed)
                _state = WebSocketState.Aborted;
            _closed.TrySetResult(true);
            Push(new Item { Broken = true }); // a pending receive ends
        }

        public override WebSocketCloseStatus? CloseStatus => _status;
        public override string CloseStatusDescription => _reason;
        public override WebSocketState State => _state;
        public override string SubProtocol => null;
    }

    /// <summary>
    /// Just enough of a WebSocket server (RFC 6455) on a loopback port for
    /// the SDK's real ClientWebSocket: one connection, its handshake
    /// recorded, then frames as the test's script says.
    /// </summary>
    sealed class MiniWebSocketServer : IDisposable
    {
        readonly TcpListener _listener = new TcpListener(IPAddress.Loopback, 0);
        Stream _stream;

        public readonly int Port;
        public readonly List<string> Texts = new List<string>();
        public string Request;

        public MiniWebSocketServer()
        {
            _listener.Start();
            Port = ((IPEndPoint)_listener.LocalEndpoint).Port;
        }

        public Task Serve(Func<MiniWebSocketServer, Task> talk) => Task.Run(async () =>
        {
            using (var client = await _listener.AcceptTcpClientAsync())
            using (_stream = client.GetStream())
            {
                var head = new StringBuilder();
                while (!head.ToString().EndsWith("\r\n\r\n"))
                    head.Append((char)(await Exactly(1))[0]);
                Request = head.ToString();
                var key = System.Text.RegularExpressions.Regex.Match(Request, "^Sec-WebSocket-Key: *(\\S+)\r$",
                    System.Text.RegularExpressions.RegexOptions.Multiline | System.Text.RegularExpressions.RegexOptions.IgnoreCase).Groups[1].Value;
                string accept;
                using (var sha = SHA1.Create())
                    accept = Convert.ToBase64String(sha.ComputeHash(Encoding.ASCII.GetBytes(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")));
                var answer = Encoding.ASCII.GetBytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: " + accept + "\r\n\r\n");
                await _stream.WriteAsync(answer, 0, answer.Length);
                await talk(this);
            }
        });

        async Task<byte[]> Exactly(int n)
        {
            var b = new byte[n];
            for (var got = 0; got < n;)
            {
                var k = await _stream.ReadAsync(b, got, n - got);
                if (k == 0)
                    throw new EndOfStreamException("the client closed the connection");
                got += k;
            }
            return b;
        }

        /// <summary>One client frame: its opcode (1 text, 2 binary, 8 close) and unmasked payload.</summary>
        public async Task<Tuple<int, byte[]>> ReadFrame()
        {
            var h = await Exactly(2);
            long len = h[1] & 0x7F;
            if (len == 126)
            {
                var l = await Exactly(2);
                len = (l[0] << 8) | l[1];
            }
            else if (len == 127)
                len = (await Exactly(8)).Aggregate(0L, (a, x) => (a << 8) | x);
            var mask = (h[1] & 0x80) != 0 ? await Exactly(4) : new byte[4];
            var payload = await Exactly((int)len);
            for (var i = 0; i < payload.Length; i++)
                payload[i] ^= mask[i % 4];
            return Tuple.Create(h[0] & 0x0F, payload);
        }

        public Task Write(int opcode, string text) => WriteRaw(opcode, Encoding.UTF8.GetBytes(text));

        public Task WriteClose(int code) => WriteRaw(8, new[] { (byte)(code >> 8), (byte)code });

        async Task WriteRaw(int opcode, byte[] payload)
        {
            var head = payload.Length < 126 ? new[] { (byte)(0x80 | opcode), (byte)payload.Length }
                : new[] { (byte)(0x80 | opcode), (byte)126, (byte)(payload.Length >> 8), (byte)payload.Length };
            await _stream.WriteAsync(head, 0, head.Length);
            await _stream.WriteAsync(payload, 0, payload.Length);
        }

        public void Dispose() => _listener.Stop();
    }
}
