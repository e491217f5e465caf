using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Http.Headers;
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
    /// The rest of the live list, against a running gateway
    /// (TALON_URL, and TALON_API_KEY of a platform owner: the 403 and 429
    /// tests make a viewer key and a tenant through the admin REST API).
    /// Ignored without TALON_URL. What they create they delete, but for the
    /// quota tenant: the API has no DeleteTenant, so one tenant of a fixed
    /// name is made once and reused.
    /// </summary>
    [TestFixture]
    public class LiveMoreTests
    {
        const string QuotaTenant = "dotnet-live-quota";
        const string QuotaOwner = "owner@dotnet-live-quota.test";
        const string QuotaPassword = "dotnet-live-quota-pw";

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

        async Task<Sandbox> Create(TalonOptions connection = null)
        {
            _sbx = await Sandbox.CreateAsync(new SandboxOptions(connection)
            {
                Timeout = TimeSpan.FromMinutes(5),
                Metadata = new Dictionary<string, string> { ["suite"] = "dotnet-live-more" },
            });
            return _sbx;
        }

        /// <summary>The live gateway: TALON_URL's first server, without a trailing slash.</summary>
        static string Url => TalonOptions.ParseUrls(Environment.GetEnvironmentVariable("TALON_URL"))[0].ToString().TrimEnd('/');

        static string AdminKey => Environment.GetEnvironmentVariable("TALON_API_KEY");

        static byte[] RandomBytes(int size, int seed)
        {
            var data = new byte[size];
            new Random(seed).NextBytes(data);
            return data;
        }

        static string Sha256(byte[] data)
        {
            using (var sha = SHA256.Create())
                return BitConverter.ToString(sha.ComputeHash(data));
        }

        // Files

        [Test]
        public async Task TenMiBRoundTripWithEqualSha256AsBytesAndAsStreams()
        {
            NeedGateway();
            var sbx = await Create();
            var data = RandomBytes(10 << 20, 10);
            var info = await sbx.Files.WriteAsync("big/bytes.bin", data);
            Assert.AreEqual(10 << 20, info.Size);
            Assert.AreEqual(Sha256(data), Sha256(await sbx.Files.ReadBytesAsync("big/bytes.bin")));

            var other = RandomBytes(10 << 20, 11);
            await sbx.Files.WriteAsync("big/stream.bin", new MemoryStream(other));
            Assert.AreEqual(10 << 20, (await sbx.Files.StatAsync("big/stream.bin")).Size);
            using (var stream = await sbx.Files.OpenReadAsync("big/stream.bin"))
            using (var sha = SHA256.Create())
                Assert.AreEqual(Sha256(other), BitConverter.ToString(sha.ComputeHash(stream)));
            // And the sandbox's own sha256sum agrees: the bytes on its disk are the ones sent.
            var sum = await sbx.Commands.RunAsync("sha256sum big/bytes.bin", new CommandOptions { Cwd = "/workspace" });
            Assert.AreEqual(Sha256(data).Replace("-", "").ToLowerInvariant(), sum.Stdout.Split(' ')[0]);
        }

        // Links

        [Test]
        public async Task APreviewLinkOfARunningServerOpensWithoutTheApiKey()
        {
            NeedGateway();
            var sbx = await Create();
            await sbx.Files.WriteAsync("site/index.html", "hello from the preview\n");
            var server = await sbx.Commands.StartAsync("exec python3 -m http.server 8000 --bind 0.0.0.0",
                new CommandOptions { Cwd = "/workspace/site", Tag = "preview-server" });
            try
            {
                var link = await sbx.PreviewUrlAsync(8000, TimeSpan.FromMinutes(5), path: true);
                StringAssert.StartsWith(Url + "/preview/" + sbx.SandboxId + "/8000/?token=", link);
                // A plain client: no Authorization header, only the link.
                using (var http = new HttpClient())
                {
                    var r = await UntilAnswered(http, () => new HttpRequestMessage(HttpMethod.Get, link));
                    Assert.AreEqual(HttpStatusCode.OK, r.StatusCode);
                    Assert.AreEqual("hello from the preview\n", await r.Content.ReadAsStringAsync());

                    // The subdomain link (GetHostAsync): a browser resolves *.localhost
                    // to loopback itself; this machine's resolver does not, so the
                    // request goes to the gateway with the link's Host header, as a
                    // browser's would.
                    var host = new Uri(await sbx.GetHostAsync(8000));
                    StringAssert.StartsWith("8000-", host.Host);
                    var req = new HttpRequestMessage(HttpMethod.Get, new UriBuilder(host) { Host = new Uri(Url).Host }.Uri);
                    req.Headers.Host = host.Authority;
                    var sub = await http.SendAsync(req);
                    Assert.AreEqual(HttpStatusCode.OK, sub.StatusCode);
                    Assert.AreEqual("hello from the preview\n", await sub.Content.ReadAsStringAsync());

                    // Without the token the same address is refused.
                    var bare = await http.GetAsync(sbx.PreviewAddress(8000));
                    Assert.AreEqual(HttpStatusCode.Unauthorized, bare.StatusCode);
                }
            }
            finally
            {
                // Ended here rather than left to the sandbox's deletion: on
                // Mono, a stream the SDK stopped following whose sandbox is
                // then deleted leaves the connection stuck for 30 s.
                await server.KillAsync();
                await AssertAsync.Throws<CommandExitException>(() => server.WaitAsync());
            }
        }

        /// <summary>The answer once the server in the sandbox listens (the gateway answers 502 until then), within 30 s.</summary>
        static async Task<HttpResponseMessage> UntilAnswered(HttpClient http, Func<HttpRequestMessage> request)
        {
            var watch = Stopwatch.StartNew();
            while (true)
            {
                var r = await http.SendAsync(request());
                if ((int)r.StatusCode < 500 || watch.Elapsed > TimeSpan.FromSeconds(30))
                    return r;
                await Task.Delay(200);
            }
        }

        // Typed errors, live

        [Test]
        public async Task ABadApiKeyIsAnAuthenticationError()
        {
            NeedGateway();
            var o = new ListOptions { ApiKey = "tln_00000000_notakeynotakeynotakeynotakeynota" };
            var e = await AssertAsync.Throws<AuthenticationException>(() => Sandbox.ListAsync(o));
            Assert.AreEqual(401, e.Status);
            Assert.AreEqual("UNAUTHENTICATED", e.Code);
            await AssertAsync.Throws<AuthenticationException>(() => Sandbox.CreateAsync(new SandboxOptions { ApiKey = o.ApiKey }));
        }

        [Test]
        public async Task AViewerKeyMayReadButNotCreate()
        {
            NeedGateway();
            var made = await Rest(HttpMethod.Post, "/v1/tenants/-/api-keys", AdminKey,
                new JObject { ["name"] = "dotnet-live-viewer", ["role"] = "ROLE_VIEWER" });
            Assert.AreEqual(200, made.Item1, made.Item2.ToString());
            var secret = (string)made.Item2["secret"];
            var id = (string)made.Item2["apiKey"]["apiKeyId"];
            try
            {
                var viewer = new TalonOptions { ApiKey = secret };
                // The key works (a read)…
                Assert.IsNotNull((await Sandbox.ListAsync(new ListOptions(viewer) { PageSize = 1 })).Sandboxes);
                // …but its role may not create.
                var e = await AssertAsync.Throws<PermissionDeniedException>(() => Sandbox.CreateAsync(new SandboxOptions(viewer)));
                Assert.AreEqual(403, e.Status);
                Assert.AreEqual("PERMISSION_DENIED", e.Code);
                StringAssert.Contains("viewer", e.Message);
                await AssertAsync.Throws<PermissionDeniedException>(() => Volume.CreateAsync("dotnet-live-viewer", new VolumeOptions(viewer)));
            }
            finally
            {
                var gone = await Rest(HttpMethod.Delete, "/v1/tenants/-/api-keys/" + id, AdminKey);
                Assert.AreEqual(200, gone.Item1, gone.Item2.ToString());
            }
            // Deleted, the key is refused outright.
            await AssertAsync.Throws<AuthenticationException>(() => Sandbox.ListAsync(new ListOptions { ApiKey = secret }));
        }

        [Test]
        public async Task MissingThingsAreNotFound()
        {
            NeedGateway();
            var e = await AssertAsync.Throws<NotFoundException>(() => Volume.GetInfoAsync("dotnet-no-such-volume-" + Guid.NewGuid().ToString("N").Substring(0, 8)));
            Assert.AreEqual(404, e.Status);
            var sbx = await Create();
            var f = await AssertAsync.Throws<NotFoundException>(() => sbx.Files.ReadTextAsync("no/such/file.txt"));
            Assert.AreEqual(404, f.Status);
            Assert.IsFalse(await sbx.Files.ExistsAsync("no/such/file.txt"));
            await sbx.KillAsync();
            // A deleted sandbox is still known (GetInfo says Deleted), so a
            // call into it is not NOT_FOUND but FAILED_PRECONDITION (HTTP 400).
            var gone = await AssertAsync.Throws<FailedPreconditionException>(() => sbx.Commands.RunAsync("true"));
            Assert.AreEqual(400, gone.Status);
            StringAssert.Contains("deleted", gone.Message);
            Assert.AreEqual(SandboxState.Deleted, (await sbx.GetInfoAsync()).State);
        }

        [Test]
        public async Task ANameTakenTwiceIsAConflictTypedAlreadyExists()
        {
            NeedGateway();
            var name = "dotnet-live-" + Guid.NewGuid().ToString("N").Substring(0, 10);
            await Volume.CreateAsync(name, new VolumeOptions { SizeMib = 64 });
            try
            {
                var e = await AssertAsync.Throws<AlreadyExistsException>(() => Volume.CreateAsync(name, new VolumeOptions { SizeMib = 64 }));
                Assert.AreEqual(409, e.Status);
                Assert.AreEqual("ALREADY_EXISTS", e.Code);
            }
            finally
            {
                await Volume.DeleteAsync(name);
            }
            await AssertAsync.Throws<NotFoundException>(() => Volume.GetInfoAsync(name));
        }

        /// <summary>
        /// RESOURCE_EXHAUSTED from a tenant quota: a tenant allowed no
        /// sandboxes at all (made once by the admin key, reused: there is no
        /// DeleteTenant), whose owner signs in; its access token is the SDK's
        /// credential.
        /// </summary>
        [Test]
        public async Task OverTheTenantsQuotaIsARateLimit()
        {
            NeedGateway();
            var zero = new JObject { ["maxSandboxes"] = "0", ["maxCpuMillis"] = "0", ["maxMemoryMib"] = "0" };
            var made = await Rest(HttpMethod.Post, "/v1/tenants", AdminKey, new JObject
            {
                ["name"] = QuotaTenant, ["ownerEmail"] = QuotaOwner, ["ownerPassword"] = QuotaPassword, ["quota"] = zero,
            });
            Assert.IsTrue(made.Item1 == 200 || made.Item1 == 409, made.Item2.ToString());
            var login = await Rest(HttpMethod.Post, "/v1/auth/login", null, new JObject { ["email"] = QuotaOwner, ["password"] = QuotaPassword });
            Assert.AreEqual(200, login.Item1, login.Item2.ToString());
            var token = (string)login.Item2["tokens"]["accessToken"];
            // Whoever made it first, its quota is none now.
            var tenantId = await TenantIdOf(QuotaTenant);
            var set = await Rest(new HttpMethod("PATCH"), "/v1/tenants/" + tenantId + "/quota", AdminKey, zero);
            Assert.AreEqual(200, set.Item1, set.Item2.ToString());

            var owner = new TalonOptions { ApiKey = token };
            var e = await AssertAsync.Throws<RateLimitException>(async () =>
            {
                using (await Sandbox.CreateAsync(new SandboxOptions(owner) { Timeout = TimeSpan.FromMinutes(1) })) { }
            });
            Assert.AreEqual(429, e.Status);
            Assert.AreEqual("RESOURCE_EXHAUSTED", e.Code);
            StringAssert.Contains("quota", e.Message);
        }

        static async Task<string> TenantIdOf(string name)
        {
            var page = "";
            do
            {
                var r = await Rest(HttpMethod.Get, "/v1/tenants?pageSize=500" + (page.Length > 0 ? "&pageToken=" + Uri.EscapeDataString(page) : ""), AdminKey);
                Assert.AreEqual(200, r.Item1, r.Item2.ToString());
                var t = ((JArray)r.Item2["tenants"]).FirstOrDefault(x => (string)x["name"] == name);
                if (t != null)
                    return (string)t["tenantId"];
                page = (string)r.Item2["nextPageToken"] ?? "";
            } while (page.Length > 0);
            Assert.Fail("no tenant " + name);
            return null;
        }

        /// <summary>A call of the REST API the SDK does not wrap (tenants, keys, sign-in): its status and JSON body.</summary>
        static async Task<Tuple<int, JObject>> Rest(HttpMethod method, string path, string bearer, JObject body = null)
        {
            using (var http = new HttpClient())
            {
                var req = new HttpRequestMessage(method, Url + path);
                if (bearer != null)
                    req.Headers.Authorization = new AuthenticationHeaderValue("Bearer", bearer);
                if (body != null)
                    req.Content = new StringContent(body.ToString(), Encoding.UTF8, "application/json");
                var resp = await http.SendAsync(req);
                var text = await resp.Content.ReadAsStringAsync();
                return Tuple.Create((int)resp.StatusCode, text.Length == 0 ? new JObject() : JObject.Parse(text));
            }
        }

        // Several servers

        [Test]
        public async Task ADeadFirstServerIsSkippedAndCallsGoToTheSecond()
        {
            NeedGateway();
            var seen = new Recording();
            var o = new TalonOptions { BaseUrl = "http://127.0.0.1:1," + Url, HttpHandler = seen };
            var sbx = await Create(o);
            Assert.AreEqual(SandboxState.Running, sbx.Info.State);
            Assert.AreEqual("via the second\n", (await sbx.Commands.RunAsync("echo via the second")).Stdout);
            await sbx.Files.WriteAsync("f.txt", "second");
            Assert.AreEqual("second", await sbx.Files.ReadTextAsync("f.txt"));
            var live = new Uri(Url);
            var ports = seen.Uris.Select(u => u.Port).ToArray();
            // Tried once, refused; every call after went to the live one.
            Assert.AreEqual(1, ports[0]);
            Assert.AreEqual(1, ports.Count(p => p == 1));
            Assert.Greater(ports.Length, 4);
            Assert.IsTrue(seen.Uris.Skip(1).All(u => u.Host == live.Host && u.Port == live.Port), string.Join(" ", seen.Uris));
            StringAssert.StartsWith(Url + "/preview/", sbx.PreviewAddress(80));
        }

        /// <summary>The real HTTP stack, remembering where each request went.</summary>
        sealed class Recording : DelegatingHandler
        {
            readonly List<Uri> _uris = new List<Uri>();

            public Recording() : base(new HttpClientHandler()) { }

            public IList<Uri> Uris { get { lock (_uris) return _uris.ToList(); } }

            protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
            {
                lock (_uris)
                    _uris.Add(request.RequestUri);
                return base.SendAsync(request, cancellationToken);
            }
        }

        // Commands

        [Test]
        public async Task StdinReachesABackgroundProcess()
        {
            NeedGateway();
            var sbx = await Create();
            var h = await sbx.Commands.StartAsync("read a; echo \"first $a\"; read b; echo \"second $b\"; cat",
                new CommandOptions { Stdin = new byte[0] });
            await h.SendStdinAsync("one\n");
            await h.SendStdinAsync(Encoding.UTF8.GetBytes("two\nrest"));
            await h.CloseStdinAsync();
            var r = await h.WaitAsync();
            Assert.AreEqual("first one\nsecond two\nrest", r.Stdout);
            Assert.AreEqual(0, r.ExitCode);
        }

        [Test]
        public async Task ASignalEndsABackgroundProcessWithTheResultCarried()
        {
            NeedGateway();
            var sbx = await Create();
            var h = await sbx.Commands.StartAsync("echo up; exec sleep 600");
            await Eventually(() => h.Stdout == "up\n");
            await h.KillAsync(15);
            var e = await AssertAsync.Throws<CommandExitException>(() => h.WaitAsync());
            Assert.AreEqual(15, e.Result.Signal);
            Assert.AreEqual("up\n", e.Stdout);
            StringAssert.Contains("signal 15", e.Message);
            Assert.IsFalse((await sbx.Commands.ListAsync()).Any(p => p.Pid == h.Pid));
        }

        [Test]
        public async Task AProcessIsReattachedByTagWithItsOutputReplayed()
        {
            NeedGateway();
            var sbx = await Create();
            var tag = "dotnet-" + Guid.NewGuid().ToString("N").Substring(0, 8);
            var h = await sbx.Commands.StartAsync("for i in 1 2 3; do echo line$i; sleep 0.3; done; echo err >&2; sleep 3",
                new CommandOptions { Tag = tag });
            h.Disconnect(); // the process runs on
            var listed = await sbx.Commands.ListAsync();
            Assert.IsTrue(listed.Any(p => p.Tag == tag && p.Running && p.Pid == h.Pid), string.Join("; ", listed));
            var again = await sbx.Commands.ConnectAsync(0, tag: tag);
            var r = await again.WaitAsync();
            Assert.AreEqual("line1\nline2\nline3\n", r.Stdout);
            Assert.AreEqual("err\n", r.Stderr);
            Assert.AreEqual(0, r.ExitCode);
            Assert.AreEqual(h.Pid, r.Pid);
        }

        [Test]
        public async Task ATimeoutRaisesTheTypedTimeoutWithTheResult()
        {
            NeedGateway();
            var sbx = await Create();
            var watch = Stopwatch.StartNew();
            var e = await AssertAsync.Throws<CommandTimeoutException>(() =>
                sbx.Commands.RunAsync("echo before; sleep 30; echo after", new CommandOptions { Timeout = TimeSpan.FromSeconds(2) }));
            Assert.Less(watch.Elapsed, TimeSpan.FromSeconds(20));
            Assert.IsTrue(e.Result.TimedOut);
            Assert.AreEqual("before\n", e.Result.Stdout);
            Assert.IsInstanceOf<TalonTimeoutException>(e);
        }

        [Test]
        public async Task ANonZeroExitRaisesTheTypedExceptionWithTheResult()
        {
            NeedGateway();
            var sbx = await Create();
            var e = await AssertAsync.Throws<CommandExitException>(() => sbx.Commands.RunAsync(new[] { "sh", "-c", "echo out; echo err >&2; exit 7" }));
            Assert.AreEqual(7, e.ExitCode);
            Assert.AreEqual(7, e.Result.ExitCode);
            Assert.AreEqual(0, e.Result.Signal);
            Assert.AreEqual("out\n", e.Result.Stdout);
            Assert.AreEqual("err\n", e.Stderr);
            Assert.Greater(e.Result.Pid, 0);
        }

        static async Task Eventually(Func<bool> condition)
        {
            var watch = Stopwatch.StartNew();
            while (!condition())
            {
                if (watch.Elapsed > TimeSpan.FromSeconds(30))
                    Assert.Fail("not within 30 s");
                await Task.Delay(50);
            }
        }
    }
}
