using System;
using System.Collections.Generic;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>Directory watches (files:watch, NDJSON) against canned gateway streams.</summary>
    [TestFixture]
    public class WatchTests
    {
        static JObject Change(string type, string path, string time = "2025-01-02T03:04:05.25Z") => new JObject
        {
            ["type"] = type,
            ["path"] = path,
            ["eventTime"] = time,
        };

        /// <summary>Waits (5 s at most) for the watch to end by itself.</summary>
        static async Task Ended(WatchHandle w)
        {
            using (var cts = new CancellationTokenSource(5000))
                await w.WaitAsync(cts.Token);
        }

        [Test]
        public async Task TheRequestAndItsEventsInOrder()
        {
            var t = await Connected.To(s => FakeHandler.Lines(
                Change("FILE_EVENT_TYPE_CREATE", "/workspace/dir/a.txt"),
                Change("FILE_EVENT_TYPE_WRITE", "/workspace/dir/sub/b.txt"),
                Change("FILE_EVENT_TYPE_REMOVE", "/workspace/dir/a.txt"),
                Change("FILE_EVENT_TYPE_RENAME", "/workspace/dir/c"),
                Change("FILE_EVENT_TYPE_CHMOD", "/workspace/dir/c"),
                Change("FILE_EVENT_TYPE_SOMETHING_NEW", "/elsewhere/d", time: null)));
            var called = new List<FilesystemEvent>();
            var w = await t.Item1.Files.WatchDirAsync("dir", e => { lock (called) called.Add(e); }, recursive: true, user: "user");
            await Ended(w);
            var req = t.Item2.Last;
            t.Item2.AssertLast("GET", "/v1/sandboxes/sbx-1/files:watch", bodiless: true);
            Assert.AreEqual(new[] { "dir" }, req.Query("path"));
            Assert.AreEqual(new[] { "true" }, req.Query("recursive"));
            Assert.AreEqual(new[] { "user" }, req.Query("user"));
            Assert.AreEqual("Bearer key-1", req.Authorization);

            var events = w.GetNewEvents();
            Assert.AreEqual(new[]
            {
                FilesystemEventType.Create, FilesystemEventType.Write, FilesystemEventType.Remove,
                FilesystemEventType.Rename, FilesystemEventType.Chmod, FilesystemEventType.Unknown,
            }, events.Select(e => e.Type).ToArray());
            Assert.AreEqual("/workspace/dir/sub/b.txt", events[1].Path);
            // Name is the path below the watched directory (E2B's), else its last part.
            Assert.AreEqual(new[] { "a.txt", "sub/b.txt", "a.txt", "c", "c", "d" }, events.Select(e => e.Name).ToArray());
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, 250, TimeSpan.Zero), events[0].Time);
            Assert.IsNull(events[5].Time);
            lock (called)
                Assert.AreEqual(events.Select(e => e.Path).ToArray(), called.Select(e => e.Path).ToArray());
            Assert.AreEqual(0, w.GetNewEvents().Count, "each event is handed out once");
            Assert.IsNull(w.Error);
            Assert.IsFalse(w.IsRunning);
        }

        [Test]
        public async Task NotRecursiveAndNoUserAreSentAsSuch()
        {
            var t = await Connected.To(s => FakeHandler.Json(""));
            using (var w = await t.Item1.Files.WatchDirAsync("/abs/dir"))
                await Ended(w);
            Assert.AreEqual(new[] { "/abs/dir" }, t.Item2.Last.Query("path"));
            Assert.AreEqual(new[] { "false" }, t.Item2.Last.Query("recursive"));
            Assert.AreEqual(0, t.Item2.Last.Query("user").Count);
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.Files.WatchDirAsync(""));
        }

        [Test]
        public void NamesAreRelativeToTheWatchedDirectory()
        {
            Assert.AreEqual("/workspace", FilesystemEvent.Base("."));
            Assert.AreEqual("/workspace/a/b", FilesystemEvent.Base("./a/b/"));
            Assert.AreEqual("/srv", FilesystemEvent.Base("/srv/"));
            Assert.AreEqual("/", FilesystemEvent.Base("/"));
            Assert.AreEqual("x/y", FilesystemEvent.Parse(Change("FILE_EVENT_TYPE_CREATE", "/x/y").ToString(), "/").Name);
            Assert.AreEqual("f", FilesystemEvent.Parse(Change("FILE_EVENT_TYPE_CREATE", "/workspace/f").ToString(), "/workspace").Name);
            Assert.AreEqual("f", FilesystemEvent.Parse(Change("FILE_EVENT_TYPE_CREATE", "/workspacefoo/f").ToString(), "/workspace").Name);
            Assert.AreEqual("FilesystemEvent(Create, /x/y)", FilesystemEvent.Parse(Change("FILE_EVENT_TYPE_CREATE", "/x/y").ToString(), "/").ToString());
        }

        [Test]
        public async Task AnErrorAnswerIsTypedAndAnErrorLineEndsTheWatchWithIt()
        {
            var t = await Connected.To(s => Answers.Error(404, 5, "no such directory"));
            var e = await AssertAsync.Throws<NotFoundException>(() => t.Item1.Files.WatchDirAsync("gone"));
            Assert.AreEqual("no such directory", e.Message);
            Assert.AreEqual(404, e.Status);

            var broken = await Connected.To(s => FakeHandler.Lines(
                Change("FILE_EVENT_TYPE_WRITE", "/workspace/a"),
                new JObject { ["error"] = new JObject { ["code"] = 9, ["message"] = "sandbox paused" } }));
            var w = await broken.Item1.Files.WatchDirAsync(".");
            var raised = await AssertAsync.Throws<FailedPreconditionException>(() => Ended(w));
            Assert.AreEqual("sandbox paused", raised.Message);
            Assert.IsInstanceOf<FailedPreconditionException>(w.Error);
            Assert.AreEqual(1, w.GetNewEvents().Count, "the events before the error are kept");
        }

        [Test]
        public async Task ACallbackThatThrowsEndsTheWatchWithItsException()
        {
            var t = await Connected.To(s => FakeHandler.Lines(Change("FILE_EVENT_TYPE_WRITE", "/workspace/a"), Change("FILE_EVENT_TYPE_WRITE", "/workspace/b")));
            var w = await t.Item1.Files.WatchDirAsync(".", e => { throw new InvalidOperationException("mine"); });
            await AssertAsync.Throws<InvalidOperationException>(() => Ended(w));
            Assert.AreEqual("mine", w.Error.Message);
        }

        [Test]
        public async Task StopEndsAWatchThatSaysNothingAndWaitingCanBeCancelled()
        {
            var never = new TaskCompletionSource<bool>().Task;
            var t = await Connected.To(s => new HttpResponseMessage(HttpStatusCode.OK)
            {
                Content = GatedLines.Content(Change("FILE_EVENT_TYPE_CREATE", "/workspace/first"), never, Change("FILE_EVENT_TYPE_CREATE", "/workspace/never")),
            });
            var w = await t.Item1.Files.WatchDirAsync(".");
            var deadline = DateTime.UtcNow.AddSeconds(5);
            IReadOnlyList<FilesystemEvent> got;
            while ((got = w.GetNewEvents()).Count == 0 && DateTime.UtcNow < deadline)
                await Task.Delay(10);
            Assert.AreEqual("/workspace/first", got.Single().Path);
            Assert.IsTrue(w.IsRunning);
            using (var cts = new CancellationTokenSource(100))
                await AssertAsync.Throws<OperationCanceledException>(() => w.WaitAsync(cts.Token));
            Assert.IsTrue(w.IsRunning, "a cancelled wait leaves the watch running");
            w.Dispose();
            await Ended(w);
            Assert.IsNull(w.Error, "a stop is no failure");
            Assert.IsFalse(w.IsRunning);
            w.Stop(); // twice is fine
        }

        [Test]
        public async Task ABrokenStreamIsUnavailable()
        {
            var t = await Connected.To(s => new HttpResponseMessage(HttpStatusCode.OK) { Content = new StreamContent(new BreaksAfter("{\"type\": \"FILE_EVENT_TYPE_WRITE\", \"path\": \"/workspace/a\"}\n")) });
            var w = await t.Item1.Files.WatchDirAsync(".");
            await AssertAsync.Throws<UnavailableException>(() => Ended(w));
            Assert.AreEqual(1, w.GetNewEvents().Count);
        }

        /// <summary>A body that gives its text, then fails as a reset connection does.</summary>
        sealed class BreaksAfter : System.IO.MemoryStream
        {
            public BreaksAfter(string text) : base(System.Text.Encoding.UTF8.GetBytes(text)) { }

            public override int Read(byte[] buffer, int offset, int count)
            {
                var n = base.Read(buffer, offset, count);
                if (n == 0)
                    throw new System.IO.IOException("Connection reset by peer");
                return n;
            }

            public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
                Task.FromResult(Read(buffer, offset, count));
        }
    }
}
