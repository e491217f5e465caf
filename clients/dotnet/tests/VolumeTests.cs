using System;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>The volume calls and volume mounts at create, against canned gateway answers.</summary>
    [TestFixture]
    public class VolumeTests
    {
        static void AssertJson(string expected, Seen req) =>
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(expected), req.Json), "sent: " + req.Body);

        static FakeHandler Answering(JObject volume) => new FakeHandler(s => FakeHandler.Json(new JObject { ["volume"] = volume }));

        [Test]
        public async Task CreateSendsTheNameAndSize()
        {
            var fake = Answering(Answers.Volume());
            var v = await Volume.CreateAsync("data", new VolumeOptions(Opt.Over(fake)) { SizeMib = 2048 });
            var req = fake.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/volumes", req.Uri.AbsolutePath);
            Assert.AreEqual("", req.Uri.Query);
            Assert.AreEqual("Bearer key-1", req.Authorization);
            Assert.AreEqual("application/json", req.ContentType);
            // sizeMib is an int64: a string in proto3 JSON.
            AssertJson(@"{""volume"": {""name"": ""data"", ""sizeMib"": ""2048""}}", req);
            Assert.AreEqual("vol_01hzzzzzzzzzzzzzzzzzzzzzzz", v.VolumeId);
            Assert.AreEqual("data", v.Name);
            Assert.AreEqual(2048L, v.SizeMib);
            Assert.AreEqual("", v.SandboxId);
            Assert.IsTrue(v.IsFree);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero), v.CreatedAt);
        }

        [Test]
        public async Task WithoutASizeTheServerChooses()
        {
            var fake = Answering(Answers.Volume());
            await Volume.CreateAsync("data", new VolumeOptions(Opt.Over(fake)));
            AssertJson(@"{""volume"": {""name"": ""data""}}", fake.Last);
        }

        [Test]
        public async Task ANameTakenIsAlreadyExistsAndBadArgumentsAreNeverSent()
        {
            var fake = new FakeHandler(s => Answers.Error(409, 6, "volume data", "req-7"));
            var e = await AssertAsync.Throws<AlreadyExistsException>(() => Volume.CreateAsync("data", new VolumeOptions(Opt.Over(fake))));
            Assert.AreEqual(409, e.Status);
            Assert.AreEqual("req-7", e.RequestId);
            Assert.AreEqual(1, fake.Requests.Count);
            await AssertAsync.Throws<InvalidArgumentException>(() => Volume.CreateAsync("", new VolumeOptions(Opt.Over(fake))));
            await AssertAsync.Throws<InvalidArgumentException>(() => Volume.CreateAsync("data", new VolumeOptions(Opt.Over(fake)) { SizeMib = 0 }));
            await AssertAsync.Throws<InvalidArgumentException>(() => Volume.GetInfoAsync(null, Opt.Over(fake)));
            await AssertAsync.Throws<InvalidArgumentException>(() => Volume.DeleteAsync("", Opt.Over(fake)));
            Assert.AreEqual(1, fake.Requests.Count);
        }

        [Test]
        public async Task ListSendsThePageAndReadsTheVolumes()
        {
            var fake = new FakeHandler(s => FakeHandler.Json(new JObject
            {
                ["volumes"] = new JArray(Answers.Volume("data", "sbx-1"), Answers.Volume("cache")),
                ["nextPageToken"] = "p2",
            }));
            var page = await Volume.ListAsync(new VolumeListOptions(Opt.Over(fake)) { PageSize = 2, PageToken = "p1" });
            var req = fake.Last;
            Assert.AreEqual("GET", req.Method.Method);
            Assert.AreEqual("/v1/volumes", req.Uri.AbsolutePath);
            Assert.AreEqual(new[] { "2" }, req.Query("pageSize"));
            Assert.AreEqual(new[] { "p1" }, req.Query("pageToken"));
            Assert.AreEqual(new[] { "data", "cache" }, page.Volumes.Select(v => v.Name).ToArray());
            Assert.AreEqual("sbx-1", page.Volumes[0].SandboxId);
            Assert.IsFalse(page.Volumes[0].IsFree);
            Assert.IsTrue(page.Volumes[1].IsFree);
            Assert.AreEqual("p2", page.NextToken);

            var empty = await Volume.ListAsync(new VolumeListOptions(Opt.Over(new FakeHandler(s => FakeHandler.Json("{}")))));
            Assert.AreEqual(0, empty.Volumes.Count);
            Assert.AreEqual("", empty.NextToken);
        }

        [Test]
        public async Task GetAndDeleteByName()
        {
            var fake = new FakeHandler(s => s.Method.Method == "GET"
                ? FakeHandler.Json(new JObject { ["volume"] = Answers.Volume("data", "sbx-1") })
                : FakeHandler.Json("{}"));
            var v = await Volume.GetInfoAsync("data", Opt.Over(fake));
            fake.AssertLast("GET", "/v1/volumes/data");
            Assert.AreEqual("sbx-1", v.SandboxId);
            await Volume.DeleteAsync("data", Opt.Over(fake));
            fake.AssertLast("DELETE", "/v1/volumes/data", bodiless: true);
        }

        [Test]
        public async Task DeletingAMountedVolumeIsFailedPrecondition()
        {
            var fake = new FakeHandler(s => Answers.Error(400, 9, "volume data is mounted by sandbox sbx-1"));
            var e = await AssertAsync.Throws<FailedPreconditionException>(() => Volume.DeleteAsync("data", Opt.Over(fake)));
            Assert.AreEqual(400, e.Status);
            Assert.AreEqual("FAILED_PRECONDITION", e.Code);
            StringAssert.Contains("sbx-1", e.Message);
            var missing = new FakeHandler(s => Answers.Error(404, 5, "volume nope"));
            await AssertAsync.Throws<NotFoundException>(() => Volume.GetInfoAsync("nope", Opt.Over(missing)));
        }

        [Test]
        public async Task CreateMountsVolumes()
        {
            var fake = new FakeHandler(s => Answers.Wrapped(Answers.Sandbox()));
            await Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake))
            {
                VolumeMounts = new[]
                {
                    new VolumeMountOptions("data", "/workspace/data"),
                    new VolumeMountOptions("models", "/models", readOnly: true),
                },
            });
            AssertJson(@"{""image"": ""host"", ""autoResume"": false, ""volumeMounts"": [
                {""name"": ""data"", ""path"": ""/workspace/data"", ""readOnly"": false},
                {""name"": ""models"", ""path"": ""/models"", ""readOnly"": true}]}", fake.Last);
        }

        [Test]
        public async Task AVolumeAnotherSandboxMountsFailsTheCreate()
        {
            var fake = new FakeHandler(s => Answers.Error(400, 9, "volume data is mounted by sandbox sbx-1"));
            await AssertAsync.Throws<FailedPreconditionException>(() => Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake))
            {
                VolumeMounts = new[] { new VolumeMountOptions("data", "/workspace/data") },
            }));
        }
    }
}
