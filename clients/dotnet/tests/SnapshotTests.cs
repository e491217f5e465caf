using System;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>Snapshots and forks against canned gateway answers: the requests sent and what comes back.</summary>
    [TestFixture]
    public class SnapshotTests
    {
        static void AssertJson(string expected, Seen req) =>
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(expected), req.Json), "sent: " + req.Body);

        [Test]
        public async Task CreateSnapshotSendsItsNameAndReadsTheSnapshot()
        {
            var t = await Connected.To(s => FakeHandler.Json(new JObject { ["snapshot"] = Answers.Snapshot() }));
            var snap = await t.Item1.CreateSnapshotAsync("before-upgrade");
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/snapshots", req.Uri.AbsolutePath);
            Assert.AreEqual("application/json", req.ContentType);
            // "memory": false is the generated request's (the server's default), the name only when given.
            AssertJson(@"{""name"": ""before-upgrade"", ""memory"": false}", req);
            Assert.AreEqual("snap-1", snap.SnapshotId);
            Assert.AreEqual("before-upgrade", snap.Name);
            Assert.AreEqual("sbx-1", snap.SandboxId);
            Assert.AreEqual("python:3.12", snap.Image);
            Assert.AreEqual(16777216L, snap.SizeBytes);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero), snap.CreatedAt);
            Assert.AreEqual(TimeSpan.FromMilliseconds(12), snap.Frozen);

            await t.Item1.CreateSnapshotAsync();
            AssertJson(@"{""memory"": false}", t.Item2.Last);
        }

        [Test]
        public async Task ANameTakenIsAlreadyExists()
        {
            var t = await Connected.To(s => Answers.Error(409, 6, "snapshot before-upgrade", "req-9"));
            var e = await AssertAsync.Throws<AlreadyExistsException>(() => t.Item1.CreateSnapshotAsync("before-upgrade"));
            Assert.AreEqual(409, e.Status);
            Assert.AreEqual("ALREADY_EXISTS", e.Code);
            Assert.AreEqual("req-9", e.RequestId);
            Assert.AreEqual("snapshot before-upgrade", e.Message);
        }

        [Test]
        public async Task ForkReturnsNewSandboxesOnTheSameConnection()
        {
            var t = await Connected.To(s =>
            {
                if (s.Uri.AbsolutePath == "/v1/sandboxes/sbx-1:fork")
                    return FakeHandler.Json(new JObject { ["sandboxes"] = new JArray(Answers.Sandbox("sbx-2"), Answers.Sandbox("sbx-3")) });
                return FakeHandler.Json("{}");
            });
            var forks = await t.Item1.ForkAsync(2);
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1:fork", req.Uri.AbsolutePath);
            AssertJson(@"{""count"": 2}", req);
            Assert.AreEqual(new[] { "sbx-2", "sbx-3" }, forks.Select(f => f.SandboxId).ToArray());
            Assert.AreEqual(SandboxState.Running, forks[0].Info.State);
            // A fork is a Sandbox like any other, over the same connection.
            await forks[1].PauseAsync();
            Assert.AreEqual("/v1/sandboxes/sbx-3:pause", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual("Bearer key-1", t.Item2.Last.Authorization);

            await t.Item1.ForkAsync();
            AssertJson(@"{""count"": 1}", t.Item2.Last);
        }

        [Test]
        public async Task ForkChecksItsCountBeforeSendingAndMapsTheServersRefusal()
        {
            var t = await Connected.To(s => Answers.Error(400, 3, "count 21: 1 to 20"));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.ForkAsync(0));
            Assert.AreEqual(0, t.Item2.Requests.Count);
            var e = await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.ForkAsync(21));
            Assert.AreEqual("count 21: 1 to 20", e.Message);
            AssertJson(@"{""count"": 21}", t.Item2.Last);
        }

        [Test]
        public async Task ListSnapshotsSendsTheFilterAndPage()
        {
            var fake = new FakeHandler(s => FakeHandler.Json(new JObject
            {
                ["snapshots"] = new JArray(Answers.Snapshot("snap-2", "b"), Answers.Snapshot("snap-1", "a")),
                ["nextPageToken"] = "p2",
            }));
            var page = await Sandbox.ListSnapshotsAsync(new SnapshotListOptions(Opt.Over(fake)) { SandboxId = "sbx-1", PageSize = 2, PageToken = "p1" });
            var req = fake.Last;
            Assert.AreEqual("GET", req.Method.Method);
            Assert.AreEqual("/v1/snapshots", req.Uri.AbsolutePath);
            Assert.AreEqual(new[] { "sbx-1" }, req.Query("sandboxId"));
            Assert.AreEqual(new[] { "2" }, req.Query("pageSize"));
            Assert.AreEqual(new[] { "p1" }, req.Query("pageToken"));
            Assert.IsNull(req.Body);
            Assert.AreEqual(new[] { "snap-2", "snap-1" }, page.Snapshots.Select(s => s.SnapshotId).ToArray());
            Assert.AreEqual("p2", page.NextToken);

            var all = await Sandbox.ListSnapshotsAsync(new SnapshotListOptions(Opt.Over(new FakeHandler(s => FakeHandler.Json("{}")))));
            Assert.AreEqual(0, all.Snapshots.Count);
            Assert.AreEqual("", all.NextToken);
            Assert.AreEqual(1, fake.Requests.Count);
        }

        [Test]
        public async Task AnUnfilteredListSendsNoQuery()
        {
            var fake = new FakeHandler(s => FakeHandler.Json(new JObject { ["snapshots"] = new JArray() }));
            await Sandbox.ListSnapshotsAsync(new SnapshotListOptions(Opt.Over(fake)) { SandboxId = "", PageToken = "" });
            Assert.AreEqual("", fake.Last.Uri.Query);
        }

        [Test]
        public async Task GetAndDeleteASnapshotById()
        {
            var fake = new FakeHandler(s => s.Method.Method == "GET"
                ? FakeHandler.Json(new JObject { ["snapshot"] = Answers.Snapshot("snap/1") })
                : FakeHandler.Json("{}"));
            var snap = await Sandbox.GetSnapshotAsync("snap/1", Opt.Over(fake));
            fake.AssertLast("GET", "/v1/snapshots/snap%2F1");
            Assert.AreEqual("snap/1", snap.SnapshotId);
            await Sandbox.DeleteSnapshotAsync("snap-1", Opt.Over(fake));
            fake.AssertLast("DELETE", "/v1/snapshots/snap-1", bodiless: true);
        }

        [Test]
        public async Task AMissingSnapshotIsNotFoundAndAnEmptyIdIsNeverSent()
        {
            var fake = new FakeHandler(s => Answers.Error(404, 5, "snapshot snap-x"));
            var e = await AssertAsync.Throws<NotFoundException>(() => Sandbox.GetSnapshotAsync("snap-x", Opt.Over(fake)));
            Assert.AreEqual(404, e.Status);
            await AssertAsync.Throws<NotFoundException>(() => Sandbox.DeleteSnapshotAsync("snap-x", Opt.Over(fake)));
            Assert.AreEqual(2, fake.Requests.Count);
            await AssertAsync.Throws<InvalidArgumentException>(() => Sandbox.GetSnapshotAsync("", Opt.Over(fake)));
            await AssertAsync.Throws<InvalidArgumentException>(() => Sandbox.DeleteSnapshotAsync(null, Opt.Over(fake)));
            Assert.AreEqual(2, fake.Requests.Count);
        }

        [Test]
        public async Task AnAnswerWithoutItsSnapshotIsAnError()
        {
            var t = await Connected.To(s => FakeHandler.Json("{}"));
            await AssertAsync.Throws<TalonException>(() => t.Item1.CreateSnapshotAsync());
        }

        [Test]
        public async Task CreateFromASnapshotSendsItsIdAndNoImage()
        {
            var fake = new FakeHandler(s => Answers.Wrapped(Answers.Sandbox("sbx-9")));
            var sbx = await Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake)) { SnapshotId = "snap-1" });
            Assert.AreEqual("POST", fake.Last.Method.Method);
            Assert.AreEqual("/v1/sandboxes", fake.Last.Uri.AbsolutePath);
            AssertJson(@"{""snapshotId"": ""snap-1"", ""autoResume"": false}", fake.Last);
            Assert.AreEqual("sbx-9", sbx.SandboxId);
        }
    }
}
