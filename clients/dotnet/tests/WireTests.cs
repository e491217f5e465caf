using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>Options become the request the gateway gets, through the generated layer's serialization.</summary>
    [TestFixture]
    public class WireTests
    {
        static FakeHandler Creating() => new FakeHandler(s => Answers.Wrapped(Answers.Sandbox()));

        [Test]
        public async Task CreateSendsEveryOption()
        {
            var fake = Creating();
            var o = new SandboxOptions(Opt.Over(fake))
            {
                Image = "python:3.12",
                Envs = new Dictionary<string, string> { ["A"] = "1" },
                Timeout = TimeSpan.FromMinutes(5),
                OnTimeout = TimeoutAction.Kill,
                Metadata = new Dictionary<string, string> { ["User"] = "Ann" },
                Labels = new Dictionary<string, string> { ["team"] = "x" },
                Network = new NetworkOptions { AllowOut = new[] { "pypi.org", "10.1.2.3/8", "1.2.3.4", "2001:db8::1/32" } },
                Isolation = Isolation.Gvisor,
                IdleTimeout = TimeSpan.FromSeconds(90.5),
                AutoResume = true,
                VolumeMounts = new[] { new VolumeMountOptions { Name = "data", Path = "/data", ReadOnly = true } },
                IdempotencyKey = "job-42",
                CpuMillis = 500,
                MemoryMib = 1024,
                Secrets = new[] { "OPENAI_API_KEY" },
                WaitTimeout = TimeSpan.FromSeconds(30),
            };
            var sbx = await Sandbox.CreateAsync(o);
            Assert.AreEqual("sbx-1", sbx.SandboxId);
            var req = fake.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes", req.Uri.AbsolutePath);
            Assert.AreEqual(new[] { "true" }, req.Query("waitUntilRunning"));
            Assert.AreEqual(new[] { "30s" }, req.Query("waitTimeout"));
            Assert.AreEqual(new[] { "job-42" }, req.Query("idempotencyKey"));
            Assert.AreEqual("Bearer key-1", req.Authorization);
            Assert.AreEqual("application/json", req.ContentType);
            var expected = JObject.Parse(@"{
                ""image"": ""python:3.12"",
                ""env"": {""A"": ""1""},
                ""timeout"": ""300s"",
                ""timeoutAction"": ""TIMEOUT_ACTION_DELETE"",
                ""metadata"": {""User"": ""Ann""},
                ""labels"": {""team"": ""x""},
                ""networkPolicy"": {""mode"": ""EGRESS_MODE_ALLOWLIST"",
                                    ""allowCidrs"": [""10.0.0.0/8"", ""1.2.3.4/32"", ""2001:db8::/32""],
                                    ""allowDomains"": [""pypi.org""]},
                ""isolation"": ""ISOLATION_GVISOR"",
                ""idleTimeout"": ""90.5s"",
                ""autoResume"": true,
                ""volumeMounts"": [{""name"": ""data"", ""path"": ""/data"", ""readOnly"": true}],
                ""resources"": {""cpuMillis"": ""500"", ""memoryMib"": ""1024""},
                ""secretNames"": [""OPENAI_API_KEY""]
            }");
            Assert.IsTrue(JToken.DeepEquals(expected, req.Json), "sent: " + req.Body);
        }

        [Test]
        public async Task ADefaultCreateIsAHostSandboxAndWaits()
        {
            var fake = Creating();
            await Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake)));
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(@"{""image"": ""host"", ""autoResume"": false}"), fake.Last.Json), fake.Last.Body);
            Assert.AreEqual(new[] { "60s" }, fake.Last.Query("waitTimeout"));
            Assert.AreEqual(0, fake.Last.Query("idempotencyKey").Count);
        }

        [Test]
        public async Task FromASnapshotWithoutWaiting()
        {
            var fake = Creating();
            await Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake)) { SnapshotId = "snap-1", Wait = false, Template = "python:3.12" });
            Assert.AreEqual("snap-1", (string)fake.Last.Json["snapshotId"]);
            Assert.AreEqual("python:3.12", (string)fake.Last.Json["image"]);
            Assert.AreEqual(0, fake.Last.Query("waitUntilRunning").Count);
            fake.Requests.Clear();
            await Sandbox.CreateAsync(new SandboxOptions(Opt.Over(fake)) { SnapshotId = "snap-1" });
            Assert.IsNull(fake.Last.Json["image"]);
        }

        [Test]
        public void NetworkOptionsAsEgressPolicies()
        {
            Assert.AreEqual("{\"mode\":\"EGRESS_MODE_SEALED\"}", Wire.Json(Wire.NetworkPolicy(false, null)));
            Assert.AreEqual("{\"mode\":\"EGRESS_MODE_SEALED\"}",
                Wire.Json(Wire.NetworkPolicy(null, new NetworkOptions { DenyOut = new[] { "0.0.0.0/0" } })));
            Assert.IsNull(Wire.NetworkPolicy(null, null));
            Assert.IsNull(Wire.NetworkPolicy(true, new NetworkOptions()));
            Assert.Throws<InvalidArgumentException>(() => Wire.NetworkPolicy(null, new NetworkOptions { DenyOut = new[] { "8.8.8.8/32" } }));
        }

        [Test]
        public void CidrsAreNormalizedAndNamesAreNot()
        {
            Assert.AreEqual("192.168.0.0/16", Wire.Cidr("192.168.7.9/16"));
            Assert.AreEqual("8.8.8.8/32", Wire.Cidr("8.8.8.8"));
            Assert.AreEqual("::1/128", Wire.Cidr("::1"));
            Assert.IsNull(Wire.Cidr("example.com"));
            Assert.IsNull(Wire.Cidr("10.0.0.0/33"));
        }

        [Test]
        public void DurationsAreSecondsWithAnS()
        {
            Assert.AreEqual("60s", Wire.Seconds(TimeSpan.FromMinutes(1)));
            Assert.AreEqual("1.5s", Wire.Seconds(TimeSpan.FromMilliseconds(1500)));
            Assert.AreEqual("0.001s", Wire.Seconds(TimeSpan.FromMilliseconds(1)));
        }

        [Test]
        public async Task ListSendsFiltersAsTheGatewayReadsThem()
        {
            var fake = new FakeHandler(s => FakeHandler.Json(new JObject
            {
                ["sandboxes"] = new JArray(Answers.Sandbox("a"), Answers.Sandbox("b", "SANDBOX_STATE_PAUSED")),
                ["nextPageToken"] = "t2",
            }));
            var page = await Sandbox.ListAsync(new ListOptions(Opt.Over(fake))
            {
                Metadata = new Dictionary<string, string> { ["user"] = "ann", ["a b"] = "c&d" },
                States = new[] { SandboxState.Running, SandboxState.Paused },
                PageSize = 10,
                PageToken = "t1",
            });
            var q = fake.Last;
            Assert.AreEqual("/v1/sandboxes", q.Uri.AbsolutePath);
            Assert.AreEqual(new[] { "SANDBOX_STATE_RUNNING", "SANDBOX_STATE_PAUSED" }, q.Query("states"));
            Assert.AreEqual(new[] { "ann" }, q.Query("metadata[user]"));
            Assert.AreEqual(new[] { "c&d" }, q.Query("metadata[a b]"));
            Assert.AreEqual(new[] { "10" }, q.Query("pageSize"));
            Assert.AreEqual(new[] { "t1" }, q.Query("pageToken"));
            Assert.AreEqual(new[] { "a", "b" }, page.Sandboxes.Select(s => s.SandboxId).ToArray());
            Assert.AreEqual(SandboxState.Paused, page.Sandboxes[1].State);
            Assert.AreEqual("t2", page.NextToken);
        }

        [Test]
        public async Task AnswersAreReadIntoTheSdksModels()
        {
            var fake = new FakeHandler(s => Answers.Wrapped(Answers.Sandbox()));
            var info = await Sandbox.GetInfoAsync("sbx-1", Opt.Over(fake));
            Assert.AreEqual(SandboxState.Running, info.State);
            Assert.AreEqual("host", info.TemplateId);
            Assert.AreEqual("ann", info.Metadata["user"]);
            Assert.AreEqual(1000, info.CpuMillis);
            Assert.AreEqual(512, info.MemoryMib);
            Assert.AreEqual("container", info.Isolation);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero), info.StartedAt);
            Assert.IsNull(info.EndAt);
        }

        [Test]
        public async Task AnEnumValueANewerServerAddsReadsAsUnknown()
        {
            var s = Answers.Sandbox(state: "SANDBOX_STATE_HIBERNATING");
            s["isolation"] = "ISOLATION_QUANTUM";
            s["someNewField"] = new JObject { ["x"] = 1 };
            var fake = new FakeHandler(r => Answers.Wrapped(s));
            var info = await Sandbox.GetInfoAsync("sbx-1", Opt.Over(fake));
            Assert.AreEqual(SandboxState.Unknown, info.State);
            Assert.AreEqual("container", info.Isolation);
        }

        [Test]
        public async Task LifecycleCallsGoWhereTheContractSays()
        {
            var fake = new FakeHandler(s => s.Uri.AbsolutePath.EndsWith("/metrics")
                ? FakeHandler.Json("{\"metrics\": {\"cpuCount\": 2, \"cpuUsedPct\": 12.5, \"memUsedBytes\": \"1048576\"}}")
                : s.Method.Method == "GET" ? Answers.Wrapped(Answers.Sandbox()) : FakeHandler.Json("{}"));
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake)));
            await sbx.SetTimeoutAsync(TimeSpan.FromMinutes(10));
            Assert.AreEqual("/v1/sandboxes/sbx-1:setTimeout", fake.Last.Uri.AbsolutePath);
            Assert.AreEqual("600s", (string)fake.Last.Json["timeout"]);
            await sbx.PauseAsync();
            Assert.AreEqual("/v1/sandboxes/sbx-1:pause", fake.Last.Uri.AbsolutePath);
            await sbx.ResumeAsync();
            Assert.AreEqual("/v1/sandboxes/sbx-1:resume", fake.Last.Uri.AbsolutePath);
            await sbx.StopAsync();
            Assert.AreEqual("/v1/sandboxes/sbx-1:stop", fake.Last.Uri.AbsolutePath);
            await sbx.StartAsync();
            Assert.AreEqual("/v1/sandboxes/sbx-1:start", fake.Last.Uri.AbsolutePath);
            var m = (await sbx.GetMetricsAsync()).Single();
            Assert.AreEqual(2, m.CpuCount);
            Assert.AreEqual(1048576, m.MemUsed);
            Assert.IsTrue(await sbx.KillAsync());
            Assert.AreEqual("DELETE", fake.Last.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1", fake.Last.Uri.AbsolutePath);
        }

        [Test]
        public async Task ConnectResumesAPausedSandboxAndSetsItsTimeout()
        {
            var state = "SANDBOX_STATE_PAUSED";
            var fake = new FakeHandler(s =>
            {
                if (s.Method.Method == "GET")
                    return Answers.Wrapped(Answers.Sandbox(state: state));
                if (s.Uri.AbsolutePath.EndsWith(":resume"))
                    state = "SANDBOX_STATE_RUNNING";
                return FakeHandler.Json("{}");
            });
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake)) { Timeout = TimeSpan.FromSeconds(120) });
            Assert.AreEqual(new[] { "GET", "POST :resume", "POST :setTimeout", "GET" },
                fake.Requests.Select(r => r.Method.Method + (r.Method.Method == "GET" ? "" : " " + r.Uri.AbsolutePath.Substring(r.Uri.AbsolutePath.IndexOf(':')))).ToArray());
            Assert.AreEqual(SandboxState.Running, sbx.Info.State);
        }

        [Test]
        public async Task ConnectToADeletedSandboxIsNotFound()
        {
            var fake = new FakeHandler(s => Answers.Wrapped(Answers.Sandbox(state: "SANDBOX_STATE_DELETED")));
            await AssertAsync.Throws<NotFoundException>(() => Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake))));
        }

        [Test]
        public async Task KillOfAGoneSandboxIsFalseAndDisposeKillsOnce()
        {
            var fake = new FakeHandler(s => s.Method.Method == "DELETE" ? Answers.Error(404, 5, "gone") : Answers.Wrapped(Answers.Sandbox()));
            Assert.IsFalse(await Sandbox.KillAsync("sbx-1", Opt.Over(fake)));
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake)));
            fake.Requests.Clear();
            sbx.Dispose();
            sbx.Dispose();
            Assert.AreEqual(1, fake.Requests.Count);
            Assert.AreEqual("DELETE", fake.Last.Method.Method);
        }
    }
}
