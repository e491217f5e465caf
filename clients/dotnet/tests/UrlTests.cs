using System;
using System.Linq;
using System.Threading.Tasks;
using Newtonsoft.Json.Linq;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>
    /// Preview links, signed file URLs, WhoAmI and the process list against
    /// canned gateway answers.
    /// </summary>
    [TestFixture]
    public class UrlTests
    {
        static void AssertJson(string expected, Seen req) =>
            Assert.IsTrue(JToken.DeepEquals(JObject.Parse(expected), req.Json), "sent: " + req.Body);

        static JObject Token(string token = "tok+/=1") => new JObject
        {
            ["token"] = token,
            ["url"] = "http://8080-sbx-1.localhost:8080/?token=" + Uri.EscapeDataString(token),
            ["expireTime"] = "2025-01-02T04:04:05Z",
        };

        [Test]
        public async Task PreviewTokenSendsThePortAndTtl()
        {
            var t = await Connected.To(s => FakeHandler.Json(Token()));
            var tok = await t.Item1.PreviewTokenAsync(8080, TimeSpan.FromMinutes(10));
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/preview-tokens", req.Uri.AbsolutePath);
            AssertJson(@"{""port"": 8080, ""ttl"": ""600s""}", req);
            Assert.AreEqual("tok+/=1", tok.Token);
            Assert.AreEqual("http://8080-sbx-1.localhost:8080/?token=tok%2B%2F%3D1", tok.Url);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 4, 4, 5, TimeSpan.Zero), tok.ExpiresAt);
            StringAssert.DoesNotContain("tok", tok.ToString().Replace("PreviewToken", ""));

            await t.Item1.PreviewTokenAsync(3000);
            AssertJson(@"{""port"": 3000}", t.Item2.Last);
            await t.Item1.PreviewTokenAsync(3000, TimeSpan.Zero);
            AssertJson(@"{""port"": 3000}", t.Item2.Last);
        }

        [Test]
        public async Task PreviewUrlIsTheServersLinkOrThePathForm()
        {
            var t = await Connected.To(s => FakeHandler.Json(Token()));
            Assert.AreEqual("http://8080-sbx-1.localhost:8080/?token=tok%2B%2F%3D1", await t.Item1.PreviewUrlAsync(8080));
            Assert.AreEqual("/v1/sandboxes/sbx-1/preview-tokens", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual("http://a.test:8080/preview/sbx-1/8080/?token=tok%2B%2F%3D1",
                await t.Item1.PreviewUrlAsync(8080, TimeSpan.FromSeconds(30), path: true));
            AssertJson(@"{""port"": 8080, ""ttl"": ""30s""}", t.Item2.Last);
            // GetHost is E2B's name for the signed link.
            Assert.AreEqual("http://8080-sbx-1.localhost:8080/?token=tok%2B%2F%3D1", await t.Item1.GetHostAsync(8080));
            Assert.AreEqual(3, t.Item2.Requests.Count);
        }

        [Test]
        public async Task PreviewAddressIsUnsignedAndSendsNothing()
        {
            var t = await Connected.To(s => FakeHandler.Json(Token()), "http://a.test:8080/");
            Assert.AreEqual("http://a.test:8080/preview/sbx-1/5173/", t.Item1.PreviewAddress(5173));
            Assert.AreEqual(0, t.Item2.Requests.Count);
            Assert.Throws<InvalidArgumentException>(() => t.Item1.PreviewAddress(0));
        }

        [Test]
        public async Task PreviewAddressFollowsTheServerCallsGoTo()
        {
            // a.test refuses: calls fail over to b.test, and links built by the SDK point there.
            var fake = new FakeHandler(s =>
            {
                if (s.Uri.Host == "a.test")
                    throw FakeHandler.Refused();
                return s.Method.Method == "GET" ? Answers.Wrapped(Answers.Sandbox()) : FakeHandler.Json(Token());
            });
            var sbx = await Sandbox.ConnectAsync("sbx-1", new ConnectOptions(Opt.Over(fake, "http://a.test:8080,http://b.test:8080")));
            Assert.AreEqual("http://b.test:8080/preview/sbx-1/80/", sbx.PreviewAddress(80));
            Assert.AreEqual("http://b.test:8080/preview/sbx-1/80/?token=tok%2B%2F%3D1", await sbx.PreviewUrlAsync(80, path: true));
        }

        [Test]
        public async Task APortOutOfRangeIsNeverSentAndTheServersRefusalIsTyped()
        {
            var t = await Connected.To(s => Answers.Error(403, 7, "the role viewer may not create preview tokens"));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.PreviewUrlAsync(0));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.PreviewTokenAsync(65536));
            Assert.AreEqual(0, t.Item2.Requests.Count);
            var e = await AssertAsync.Throws<PermissionDeniedException>(() => t.Item1.GetHostAsync(8080));
            Assert.AreEqual(403, e.Status);
            Assert.AreEqual("PERMISSION_DENIED", e.Code);
        }

        [Test]
        public async Task AnAnswerWithoutTokenOrUrlIsAnError()
        {
            var t = await Connected.To(s => FakeHandler.Json(s.Uri.AbsolutePath.EndsWith("/preview-tokens") ? "{\"token\": \"x\"}" : "{}"));
            await AssertAsync.Throws<TalonException>(() => t.Item1.PreviewUrlAsync(8080));
            Assert.AreEqual("http://a.test:8080/preview/sbx-1/8080/?token=x", await t.Item1.PreviewUrlAsync(8080, path: true));
            await AssertAsync.Throws<TalonException>(() => t.Item1.DownloadUrlAsync("a.txt"));
            var none = await Connected.To(s => FakeHandler.Json("{}"));
            await AssertAsync.Throws<TalonException>(() => none.Item1.PreviewTokenAsync(8080));
        }

        [Test]
        public async Task DownloadAndUploadUrlsAskForTheirOperation()
        {
            var t = await Connected.To(s => FakeHandler.Json(new JObject
            {
                ["url"] = "http://a.test:8080/v1/sandboxes/sbx-1/files:" + (s.Json["operation"].ToString().EndsWith("READ") ? "read" : "write") + "?path=out%2Fr.csv&token=t1",
                ["token"] = "t1",
                ["expireTime"] = "2025-01-02T04:04:05Z",
            }));
            var down = await t.Item1.DownloadUrlAsync("out/r.csv", TimeSpan.FromMinutes(10));
            var req = t.Item2.Last;
            Assert.AreEqual("POST", req.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/file-urls", req.Uri.AbsolutePath);
            AssertJson(@"{""path"": ""out/r.csv"", ""operation"": ""FILE_URL_OPERATION_READ"", ""ttl"": ""600s""}", req);
            Assert.AreEqual("http://a.test:8080/v1/sandboxes/sbx-1/files:read?path=out%2Fr.csv&token=t1", down);

            var up = await t.Item1.UploadUrlAsync("out/r.csv");
            AssertJson(@"{""path"": ""out/r.csv"", ""operation"": ""FILE_URL_OPERATION_WRITE""}", t.Item2.Last);
            Assert.AreEqual("http://a.test:8080/v1/sandboxes/sbx-1/files:write?path=out%2Fr.csv&token=t1", up);
        }

        [Test]
        public async Task AFileUrlNeedsAPathAndMapsTheServersErrors()
        {
            var t = await Connected.To(s => Answers.Error(400, 3, "ttl 90000s: at most 86400s"));
            await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.UploadUrlAsync(""));
            Assert.AreEqual(0, t.Item2.Requests.Count);
            var e = await AssertAsync.Throws<InvalidArgumentException>(() => t.Item1.DownloadUrlAsync("a.txt", TimeSpan.FromSeconds(90000)));
            Assert.AreEqual("ttl 90000s: at most 86400s", e.Message);
            AssertJson(@"{""path"": ""a.txt"", ""operation"": ""FILE_URL_OPERATION_READ"", ""ttl"": ""90000s""}", t.Item2.Last);
        }

        [Test]
        public async Task WhoAmIReadsTheCredential()
        {
            var t = await Connected.To(s => FakeHandler.Json(new JObject
            {
                ["tenantId"] = "ten-1",
                ["userId"] = "usr-1",
                ["apiKeyId"] = "key-id-1",
                ["email"] = "ann@acme.test",
                ["role"] = "ROLE_DEVELOPER",
                ["credentialKind"] = "CREDENTIAL_KIND_API_KEY",
            }));
            var me = await t.Item1.WhoAmIAsync();
            Assert.AreEqual("GET", t.Item2.Last.Method.Method);
            Assert.AreEqual("/v1/auth/me", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual("Bearer key-1", t.Item2.Last.Authorization);
            Assert.AreEqual("ten-1", me.TenantId);
            Assert.AreEqual("usr-1", me.UserId);
            Assert.AreEqual("key-id-1", me.ApiKeyId);
            Assert.AreEqual("ann@acme.test", me.Email);
            Assert.AreEqual("developer", me.Role);
            Assert.AreEqual("api_key", me.CredentialKind);
            Assert.IsFalse(me.PlatformAdmin);

            var bad = await Connected.To(s => Answers.Error(401, 16, "the API key was revoked"));
            await AssertAsync.Throws<AuthenticationException>(() => bad.Item1.WhoAmIAsync());
        }

        [Test]
        public async Task CommandsListReadsTheProcesses()
        {
            var t = await Connected.To(s => FakeHandler.Json(new JObject
            {
                ["processes"] = new JArray(
                    new JObject { ["pid"] = 7, ["tag"] = "srv", ["command"] = new JArray("python", "-m", "http.server"), ["cwd"] = "/workspace",
                                  ["running"] = true, ["startTime"] = "2025-01-02T03:04:05Z" },
                    new JObject { ["pid"] = 9, ["command"] = new JArray("false"), ["exitCode"] = 1 }),
            }));
            var ps = await t.Item1.Commands.ListAsync(includeExited: true);
            Assert.AreEqual("GET", t.Item2.Last.Method.Method);
            Assert.AreEqual("/v1/sandboxes/sbx-1/processes", t.Item2.Last.Uri.AbsolutePath);
            Assert.AreEqual(new[] { "true" }, t.Item2.Last.Query("includeExited"));
            Assert.AreEqual(new[] { 7, 9 }, ps.Select(p => p.Pid).ToArray());
            Assert.AreEqual("srv", ps[0].Tag);
            Assert.AreEqual(new[] { "python", "-m", "http.server" }, ps[0].Command.ToArray());
            Assert.IsTrue(ps[0].Running);
            Assert.AreEqual(new DateTimeOffset(2025, 1, 2, 3, 4, 5, TimeSpan.Zero), ps[0].StartedAt);
            Assert.IsFalse(ps[1].Running);
            Assert.AreEqual(1, ps[1].ExitCode);
            Assert.AreEqual("", ps[1].Tag);

            await t.Item1.Commands.ListAsync();
            Assert.AreEqual(new[] { "false" }, t.Item2.Last.Query("includeExited"));
        }
    }
}
