using System;
using System.Linq;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using NUnit.Framework;
using Talon;

namespace Talon.Tests
{
    /// <summary>Configuration from the environment, the URL list, and failover between servers.</summary>
    [TestFixture]
    public class ServerTests
    {
        string _url, _key;

        [SetUp]
        public void SaveEnvironment()
        {
            _url = Environment.GetEnvironmentVariable("TALON_URL");
            _key = Environment.GetEnvironmentVariable("TALON_API_KEY");
        }

        [TearDown]
        public void RestoreEnvironment()
        {
            Environment.SetEnvironmentVariable("TALON_URL", _url);
            Environment.SetEnvironmentVariable("TALON_API_KEY", _key);
        }

        [Test]
        public void UrlsAreCommaSeparatedTrimmedAndOrdered()
        {
            var urls = TalonOptions.ParseUrls(" http://a:8080/ ,https://b.example/talon/,http://c:1");
            Assert.AreEqual(new[] { "http://a:8080/", "https://b.example/talon", "http://c:1/" }, urls.Select(u => u.ToString()).ToArray());
        }

        [Test]
        public void BadUrlListsAreRefused()
        {
            Assert.Throws<InvalidArgumentException>(() => TalonOptions.ParseUrls("http://a:8080,,http://b:8080"));
            Assert.Throws<InvalidArgumentException>(() => TalonOptions.ParseUrls("http://a:8080,"));
            Assert.Throws<InvalidArgumentException>(() => TalonOptions.ParseUrls("ftp://a"));
            Assert.Throws<InvalidArgumentException>(() => TalonOptions.ParseUrls("a:8080"));
            Assert.Throws<InvalidArgumentException>(() => TalonOptions.ParseUrls("http://a:8080/?x=1"));
        }

        [Test]
        public void TheEnvironmentFillsWhatIsUnset()
        {
            Environment.SetEnvironmentVariable("TALON_URL", "http://env-a:1, http://env-b:2/");
            Environment.SetEnvironmentVariable("TALON_API_KEY", "env-key");
            var r = new TalonOptions().Resolve();
            Assert.AreEqual("env-key", r.ApiKey);
            Assert.AreEqual(2, r.Urls.Count);
            Assert.AreEqual("http://env-a:1", r.BaseUrl);
            var mine = new TalonOptions { ApiKey = "mine", BaseUrl = "http://mine:3" }.Resolve();
            Assert.AreEqual("mine", mine.ApiKey);
            Assert.AreEqual("http://mine:3", mine.BaseUrl);
        }

        [Test]
        public void NoUrlMeansTheLocalGatewayAndNoKeyIsAnAuthenticationError()
        {
            Environment.SetEnvironmentVariable("TALON_URL", null);
            Environment.SetEnvironmentVariable("TALON_API_KEY", null);
            Assert.Throws<AuthenticationException>(() => new TalonOptions().Resolve());
            Assert.AreEqual(TalonOptions.DefaultUrl, new TalonOptions { ApiKey = "k" }.Resolve().BaseUrl);
        }

        [Test]
        public void EqualSettingsShareAConnection()
        {
            var a = new TalonOptions { ApiKey = "k", BaseUrl = "http://x:1,http://y:2" };
            var b = new TalonOptions { ApiKey = "k", BaseUrl = "http://x:1/, http://y:2" };
            Assert.AreSame(Connection.For(a), Connection.For(b));
            Assert.AreNotSame(Connection.For(a), Connection.For(new TalonOptions { ApiKey = "other", BaseUrl = "http://x:1,http://y:2" }));
        }

        static FakeHandler Servers(Func<string, Exception> fail) => new FakeHandler(s =>
        {
            var e = fail(s.Uri.Host);
            if (e != null)
                throw e;
            return Answers.Wrapped(Answers.Sandbox(s.Uri.Host));
        });

        [Test]
        public async Task ARefusedServerIsSkippedAndTheNextStaysCurrent()
        {
            var fake = Servers(host => host == "a" ? FakeHandler.Refused() : null);
            var o = Opt.Over(fake, "http://a:1,http://b:2,http://c:3");
            var info = await Sandbox.GetInfoAsync("x", o);
            Assert.AreEqual("b", info.SandboxId); // b answered
            Assert.AreEqual(new[] { "a", "b" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
            fake.Requests.Clear();
            var sbx = await Sandbox.ConnectAsync("x", new ConnectOptions(o));
            await sbx.GetInfoAsync();
            // The SDK's connection is per options object with a handler, so
            // this one starts at a again; within it, b stays current.
            Assert.AreEqual(new[] { "a", "b", "b" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
        }

        [Test]
        public async Task AFailureAfterSendingIsNotResentButMovesOn()
        {
            var broken = true;
            var fake = Servers(host => host == "a" && broken ? FakeHandler.Reset() : null);
            var sbx = await ConnectVia(fake, "http://a:1,http://b:2", () => broken = false);
            broken = true;
            fake.Requests.Clear();
            // A create may have happened: not resent, UNAVAILABLE…
            var e = await AssertAsync.Throws<UnavailableException>(() => sbx.GetInfoAsync());
            StringAssert.Contains("http://a:1", e.Message);
            Assert.AreEqual(new[] { "a" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
            // …and the next call goes to the next server.
            var info = await sbx.GetInfoAsync();
            Assert.AreEqual("b", info.SandboxId);
            Assert.AreEqual(new[] { "a", "b" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
        }

        /// <summary>A sandbox whose connection reached server a first (healthy until then).</summary>
        static async Task<Sandbox> ConnectVia(FakeHandler fake, string urls, Action healthy)
        {
            healthy();
            return await Sandbox.ConnectAsync("x", new ConnectOptions(Opt.Over(fake, urls)));
        }

        [Test]
        public async Task WhenEveryServerRefusesEachIsTriedOnceInOrder()
        {
            var fake = Servers(host => FakeHandler.Refused());
            var o = Opt.Over(fake, "http://a:1,http://b:2,http://c:3");
            var sbx = await AssertAsync.Throws<UnavailableException>(() => Sandbox.GetInfoAsync("x", o));
            Assert.AreEqual(new[] { "a", "b", "c" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
            StringAssert.Contains("http://c:3", sbx.Message);
        }

        [Test]
        public async Task TheOrderStartsAtTheCurrentServerAndWraps()
        {
            string down = "a";
            var fake = Servers(host => host == down ? FakeHandler.Refused() : null);
            var sbx = await Sandbox.ConnectAsync("x", new ConnectOptions(Opt.Over(fake, "http://a:1,http://b:2,http://c:3")));
            down = "b"; // b is current now, and goes down
            fake.Requests.Clear();
            await sbx.GetInfoAsync();
            Assert.AreEqual(new[] { "b", "c" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
            down = "c";
            fake.Requests.Clear();
            await sbx.GetInfoAsync();
            Assert.AreEqual(new[] { "c", "a" }, fake.Requests.Select(r => r.Uri.Host).ToArray());
        }

        [Test]
        public void ThePathMovesFromTheFirstServersPrefixToTheOthers()
        {
            var urls = TalonOptions.ParseUrls("http://a:1/x,https://b:2/y/z,http://c:3");
            var h = new FailoverHandler(urls, new FakeHandler(s => null));
            var u = new Uri("http://a:1/x/v1/sandboxes/s%2F1/files:read?path=a%20b&user=u");
            Assert.AreEqual(u, h.At(u, 0));
            Assert.AreEqual("https://b:2/y/z/v1/sandboxes/s%2F1/files:read?path=a%20b&user=u", h.At(u, 1).AbsoluteUri);
            Assert.AreEqual("http://c:3/v1/sandboxes/s%2F1/files:read?path=a%20b&user=u", h.At(u, 2).AbsoluteUri);
        }

        [Test]
        public void WhatCountsAsUnsent()
        {
            Assert.IsTrue(FailoverHandler.IsUnsent(FakeHandler.Refused()));
            Assert.IsTrue(FailoverHandler.IsUnsent(new System.Net.Http.HttpRequestException("x", new SocketException((int)SocketError.HostNotFound))));
            Assert.IsTrue(FailoverHandler.IsUnsent(new WebException("x", WebExceptionStatus.ConnectFailure)));
            Assert.IsFalse(FailoverHandler.IsUnsent(FakeHandler.Reset()));
            Assert.IsFalse(FailoverHandler.IsUnsent(new System.Net.Http.HttpRequestException("x")));
        }

        /// <summary>
        /// The real HttpClientHandler of this runtime (Mono's here, .NET's
        /// elsewhere): a closed port is skipped and a live one answers.
        /// </summary>
        [Test]
        public async Task RealSocketsAClosedPortThenALiveServer()
        {
            var closed = FreePort();
            var live = FreePort();
            var listener = new HttpListener();
            listener.Prefixes.Add("http://127.0.0.1:" + live + "/");
            listener.Start();
            try
            {
                var serve = Task.Run(async () =>
                {
                    var ctx = await listener.GetContextAsync();
                    var body = Encoding.UTF8.GetBytes(new Newtonsoft.Json.Linq.JObject { ["sandbox"] = Answers.Sandbox("live") }.ToString());
                    ctx.Response.ContentType = "application/json";
                    ctx.Response.ContentLength64 = body.Length;
                    await ctx.Response.OutputStream.WriteAsync(body, 0, body.Length);
                    ctx.Response.Close();
                    return ctx.Request.Url.AbsolutePath;
                });
                var o = new TalonOptions
                {
                    ApiKey = "k",
                    BaseUrl = "http://127.0.0.1:" + closed + ",http://127.0.0.1:" + live,
                    HttpHandler = new System.Net.Http.HttpClientHandler(),
                };
                var info = await Sandbox.GetInfoAsync("sbx-1", o);
                Assert.AreEqual("live", info.SandboxId);
                Assert.AreEqual("/v1/sandboxes/sbx-1", await serve);
            }
            finally
            {
                listener.Close();
            }
        }

        static int FreePort()
        {
            var l = new TcpListener(IPAddress.Loopback, 0);
            l.Start();
            var port = ((IPEndPoint)l.LocalEndpoint).Port;
            l.Stop();
            return port;
        }
    }
}
